#!/usr/bin/env python3
"""Reads a callgrind output file and prints costs per unit of work, the unit being the calls of one function.

    scripts/callgrind-per-unit.py FILE UNIT_PATTERN [--top N] [--match PATTERN]... [--callers PATTERN]... [--callees PATTERN]...

UNIT_PATTERN is a regular expression over demangled function names: the number of calls to the functions it matches
is the number of units in the file (for an idle heartbeat cycle, `SessionMachine.pongReceived`). Prints on standard
output, as `name value` lines:
    profile.units                   the calls of UNIT_PATTERN's functions
    profile.instructions_per_unit   every instruction in the file over the units
    profile.allocations_per_unit    calls of swift_allocObject per unit
    profile.mallocs_per_unit        calls of malloc per unit (swift_allocObject's included)
    profile.access_checks_per_unit  calls of swift_beginAccess (the run-time exclusivity checks) per unit
    profile.task_switches_per_unit  calls of swift_task_switch per unit
then the N functions with the largest inclusive cost (default 40), each as `inclusive per unit, calls per unit, name`,
every function matching a --match PATTERN the same way, and for each --callers PATTERN the functions that call the
functions it matches, with their calls per unit (`--callers '^swift_allocObject$'`: who allocates), and for each
--callees PATTERN the functions it matches, each with the inclusive cost of what it calls. Swift names are demangled with `swift demangle`.

Inclusive cost is the function's own instructions plus those of the calls it made (a recursive call counts once per
level, which the hot paths here do not have).
"""
import collections
import re
import subprocess
import sys


def parse(path):
    names = {}  # compressed id -> mangled name, per kind ("fn" and "cfn" share one table)
    self_cost = collections.Counter()
    call_cost = collections.Counter()  # caller -> instructions in the calls it made
    calls = collections.Counter()  # callee -> calls
    callers = collections.defaultdict(collections.Counter)  # callee -> caller -> calls
    callees = collections.defaultdict(collections.Counter)  # caller -> callee -> inclusive instructions
    total = 0
    current = None
    pending_call = None  # (callee, count): the next cost line is that call's inclusive cost

    def name_of(value):
        match = re.match(r"\((\d+)\)(?: (.*))?$", value)
        if not match:
            return value
        if match.group(2) is not None:
            names[match.group(1)] = match.group(2)
        return names.get(match.group(1), value)

    with open(path, errors="replace") as file:
        for line in file:
            line = line.rstrip("\n")
            if not line or line[0] == "#":
                continue
            if line.startswith("fn="):
                current = name_of(line[3:])
            elif line.startswith("cfn="):
                callee = name_of(line[4:])
            elif line.startswith("calls="):
                pending_call = (callee, int(line[6:].split()[0]))
            elif line[0].isdigit() or line[0] in "+-*":
                fields = line.split()
                cost = int(fields[1]) if len(fields) > 1 else 0
                if pending_call:
                    callee_name, count = pending_call
                    calls[callee_name] += count
                    callers[callee_name][current] += count
                    call_cost[current] += cost
                    callees[current][callee_name] += cost
                    pending_call = None
                else:
                    self_cost[current] += cost
                    total += cost
            elif line.startswith("summary:") or line.startswith("totals:"):
                pass
    inclusive = collections.Counter()
    for name in set(self_cost) | set(call_cost):
        inclusive[name] = self_cost[name] + call_cost[name]
    return total, inclusive, calls, callers, callees


def demangle(names):
    names = list(names)
    try:
        result = subprocess.run(
            ["swift", "demangle", "--simplified", "--compact"], input="\n".join(names), capture_output=True,
            text=True, check=True)
        readable = result.stdout.split("\n")
        if len(readable) >= len(names):
            return dict(zip(names, readable))
    except (OSError, subprocess.CalledProcessError):
        pass
    return {name: name for name in names}


def main():
    arguments = sys.argv[1:]
    top, matches, caller_patterns, callee_patterns, positional = 40, [], [], [], []
    while arguments:
        argument = arguments.pop(0)
        if argument == "--top":
            top = int(arguments.pop(0))
        elif argument == "--match":
            matches.append(arguments.pop(0))
        elif argument == "--callers":
            caller_patterns.append(arguments.pop(0))
        elif argument == "--callees":
            callee_patterns.append(arguments.pop(0))
        else:
            positional.append(argument)
    if len(positional) != 2:
        sys.exit(__doc__)
    path, unit_pattern = positional
    total, inclusive, calls, callers, callees = parse(path)
    readable = demangle(set(inclusive) | set(calls) | {c for by in callers.values() for c in by})
    units = sum(count for name, count in calls.items() if re.search(unit_pattern, readable[name]))
    if units == 0:
        sys.exit(f"callgrind-per-unit: no calls of {unit_pattern} in {path}")

    def calls_of(pattern):
        return sum(count for name, count in calls.items() if re.search(pattern, readable[name]))

    print(f"profile.units {units}")
    print(f"profile.instructions_per_unit {total / units:.0f}")
    print(f"profile.allocations_per_unit {calls_of(r'^swift_allocObject$') / units:.2f}")
    print(f"profile.mallocs_per_unit {calls_of(r'^malloc$') / units:.2f}")
    print(f"profile.access_checks_per_unit {calls_of(r'^swift_beginAccess$') / units:.2f}")
    print(f"profile.task_switches_per_unit {calls_of(r'^swift_task_switch$') / units:.2f}")
    print(f"\n{'incl/unit':>10} {'calls/unit':>10}  function (top {top} by inclusive cost)")
    for name, cost in inclusive.most_common(top):
        print(f"{cost / units:10.0f} {calls[name] / units:10.2f}  {readable[name][:150]}")
    for pattern in matches:
        print(f"\n{'incl/unit':>10} {'calls/unit':>10}  functions matching {pattern}")
        found = [(name, cost) for name, cost in inclusive.items() if re.search(pattern, readable[name])]
        for name, cost in sorted(found, key=lambda item: -item[1]):
            print(f"{cost / units:10.0f} {calls[name] / units:10.2f}  {readable[name][:150]}")
    for pattern in caller_patterns:
        print(f"\n{'calls/unit':>10}  callers of functions matching {pattern}")
        by_caller = collections.Counter()
        for name, by in callers.items():
            if re.search(pattern, readable[name]):
                by_caller.update(by)
        for caller, count in by_caller.most_common():
            if count / units >= 0.01:
                print(f"{count / units:10.2f}  {readable.get(caller, caller)[:150]}")
    for pattern in callee_patterns:
        for name in sorted((n for n in inclusive if re.search(pattern, readable[n])), key=lambda n: -inclusive[n]):
            print(f"\n{inclusive[name] / units:10.0f}  {readable[name][:150]}: self {(inclusive[name] - sum(callees[name].values())) / units:.0f}, calls")
            for callee, cost in callees[name].most_common():
                if cost / units >= 10:
                    print(f"{cost / units:10.0f}  {readable.get(callee, callee)[:150]}")


if __name__ == "__main__":
    main()
