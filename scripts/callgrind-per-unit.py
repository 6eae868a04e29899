#!/usr/bin/env python3
"""Reads a callgrind output file and prints costs per unit of work, the unit being the calls of one function.

    scripts/callgrind-per-unit.py FILE UNIT_PATTERN [--top N] [--match PATTERN]... [--callers PATTERN]... [--callees PATTERN]...
                                  [--misses N]

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

From a run with `--cache-sim=yes` (callgrind's simulated caches: a first-level data cache and a last-level cache
shaped like this machine's), also, per unit:
    profile.d1_misses_per_unit      first-level data cache misses (reads and writes: D1mr + D1mw)
    profile.ll_misses_per_unit      last-level cache misses, instructions and data (ILmr + DLmr + DLmw)
    profile.i1_misses_per_unit      first-level instruction cache misses (I1mr)
    profile.data_accesses_per_unit  data reads and writes (Dr + Dw)
every table gains these misses (inclusive) beside the instructions, and two more follow: the N functions (--misses,
default 30) and the objects (executable and libraries) with the most misses of their own, by D1 then by LL.

Inclusive cost is the function's own instructions plus those of the calls it made (a recursive call counts once per
level, which the hot paths here do not have).
"""
import collections
import re
import subprocess
import sys


def parse(path):
    names = {}  # compressed id -> mangled name, per kind ("fn" and "cfn" share one table)
    objects = {}  # compressed id -> object path ("ob" and "cob" share one table)
    self_cost = collections.Counter()
    call_cost = collections.Counter()  # caller -> instructions in the calls it made
    calls = collections.Counter()  # callee -> calls
    callers = collections.defaultdict(collections.Counter)  # callee -> caller -> calls
    callees = collections.defaultdict(collections.Counter)  # caller -> callee -> inclusive instructions
    # Every event of the file (Ir first; with --cache-sim also Dr, Dw and the misses), by name.
    event_names = ["Ir"]
    self_events = collections.defaultdict(lambda: [0] * len(event_names))  # function -> its own events
    call_events = collections.defaultdict(lambda: [0] * len(event_names))  # caller -> events in its calls
    object_events = collections.defaultdict(lambda: [0] * len(event_names))  # object -> its functions' own events
    function_object = {}
    totals = None
    total = 0
    current = None
    current_object = None
    pending_call = None  # (callee, count): the next cost line is that call's inclusive cost

    def name_of(value, table=names):
        match = re.match(r"\((\d+)\)(?: (.*))?$", value)
        if not match:
            return value
        if match.group(2) is not None:
            table[match.group(1)] = match.group(2)
        return table.get(match.group(1), value)

    def add(vector, fields):
        for index, field in enumerate(fields[1:len(event_names) + 1]):
            vector[index] += int(field)

    with open(path, errors="replace") as file:
        for line in file:
            line = line.rstrip("\n")
            if not line or line[0] == "#":
                continue
            if line.startswith("events:"):
                event_names = line.split()[1:]
                totals = [0] * len(event_names)
            elif line.startswith("ob="):
                current_object = name_of(line[3:], objects)
            elif line.startswith("cob="):
                name_of(line[4:], objects)
            elif line.startswith("fn="):
                current = name_of(line[3:])
                function_object.setdefault(current, current_object)
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
                    add(call_events[current], fields)
                    pending_call = None
                else:
                    self_cost[current] += cost
                    total += cost
                    add(self_events[current], fields)
                    add(object_events[function_object.get(current)], fields)
                    if totals is not None:
                        add(totals, fields)
            elif line.startswith("summary:") or line.startswith("totals:"):
                pass
    inclusive = collections.Counter()
    for name in set(self_cost) | set(call_cost):
        inclusive[name] = self_cost[name] + call_cost[name]
    cache = Cache(event_names, totals, self_events, call_events, object_events) if "D1mr" in event_names else None
    return total, inclusive, calls, callers, callees, cache


class Cache:
    """The simulated cache's misses, per function (its own, and with its calls) and per object."""

    def __init__(self, event_names, totals, self_events, call_events, object_events):
        self.index = {name: index for index, name in enumerate(event_names)}
        self.totals = totals
        self.self_events = self_events
        self.call_events = call_events
        self.object_events = object_events

    def sum(self, vector, *names):
        return sum(vector[self.index[name]] for name in names if name in self.index)

    def d1(self, vector):
        return self.sum(vector, "D1mr", "D1mw")

    def ll(self, vector):
        return self.sum(vector, "ILmr", "DLmr", "DLmw")

    def inclusive(self, name):
        own = self.self_events.get(name)
        calls = self.call_events.get(name)
        if own is None and calls is None:
            return [0] * len(self.index)
        if own is None or calls is None:
            return list(own or calls)
        return [a + b for a, b in zip(own, calls)]


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
    top, matches, caller_patterns, callee_patterns, positional, misses = 40, [], [], [], [], 30
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
        elif argument == "--misses":
            misses = int(arguments.pop(0))
        else:
            positional.append(argument)
    if len(positional) != 2:
        sys.exit(__doc__)
    path, unit_pattern = positional
    total, inclusive, calls, callers, callees, cache = parse(path)
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
    if cache:
        print(f"profile.d1_misses_per_unit {cache.d1(cache.totals) / units:.1f}")
        print(f"profile.ll_misses_per_unit {cache.ll(cache.totals) / units:.1f}")
        print(f"profile.i1_misses_per_unit {cache.sum(cache.totals, 'I1mr') / units:.1f}")
        print(f"profile.data_accesses_per_unit {cache.sum(cache.totals, 'Dr', 'Dw') / units:.0f}")
    misses_heading = f" {'D1m/unit':>9} {'LLm/unit':>9}" if cache else ""

    def row(name, cost):
        line = f"{cost / units:10.0f} {calls[name] / units:10.2f}"
        if cache:
            events = cache.inclusive(name)
            line += f" {cache.d1(events) / units:9.1f} {cache.ll(events) / units:9.1f}"
        return f"{line}  {readable[name][:150]}"

    print(f"\n{'incl/unit':>10} {'calls/unit':>10}{misses_heading}  function (top {top} by inclusive cost)")
    for name, cost in inclusive.most_common(top):
        print(row(name, cost))
    for pattern in matches:
        print(f"\n{'incl/unit':>10} {'calls/unit':>10}{misses_heading}  functions matching {pattern}")
        found = [(name, cost) for name, cost in inclusive.items() if re.search(pattern, readable[name])]
        for name, cost in sorted(found, key=lambda item: -item[1]):
            print(row(name, cost))
    if cache and misses:
        for label, measure in (("D1", cache.d1), ("LL", cache.ll)):
            print(f"\n{'D1m/unit':>9} {'LLm/unit':>9} {'Ir/unit':>9}  functions with the most {label} misses of their own")
            ranked = sorted(cache.self_events.items(), key=lambda item: -measure(item[1]))
            for name, events in ranked[:misses]:
                print(f"{cache.d1(events) / units:9.1f} {cache.ll(events) / units:9.1f} "
                      f"{events[0] / units:9.0f}  {readable.get(name, name)[:150]}")
        print(f"\n{'D1m/unit':>9} {'LLm/unit':>9} {'Ir/unit':>9}  objects, by their functions' own misses")
        for name, events in sorted(cache.object_events.items(), key=lambda item: -cache.d1(item[1])):
            if events[0] / units >= 1:
                print(f"{cache.d1(events) / units:9.1f} {cache.ll(events) / units:9.1f} {events[0] / units:9.0f}  {name}")
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
