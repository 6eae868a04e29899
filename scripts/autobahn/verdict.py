#!/usr/bin/env python3
"""Counts Autobahn|Testsuite outcomes per agent and applies Tether's rule; exits 1 when it is broken.

Usage: verdict.py INDEX.json [INDEX.json ...]   (reports/clients/index.json, reports/servers/index.json)

Agents whose name starts with "python-" are references (another implementation in the same run): counted and listed,
not judged.

The rule: no FAILED, WRONG CODE, UNCLEAN or UNIMPLEMENTED outcome, for behaviour or close behaviour; NON-STRICT
only in the cases where a valid message and a violation arrive in the same read, so that the connection fails
(as RFC 6455 asks, at once) before the application has echoed the valid message.
"""
import collections
import json
import sys

ACCEPTED = {"OK", "INFORMATIONAL"}
# "Valid message, then a violation in the same read": failing at once is the RFC's rule, so the echo of the valid
# message may or may not reach the server first, depending on timing.
NON_STRICT_ALLOWED = {"3.2", "3.3", "3.4", "4.1.3", "4.1.4", "4.1.5", "4.2.3", "4.2.4", "4.2.5", "5.15"}


def case_key(case):
    return tuple(int(part) for part in case.split("."))


def judge(agent, cases):
    behavior = collections.Counter(result["behavior"] for result in cases.values())
    close = collections.Counter(result["behaviorClose"] for result in cases.values())
    print(f"{agent}: {len(cases)} cases")
    print(f"  behavior:       {dict(sorted(behavior.items()))}")
    print(f"  close behavior: {dict(sorted(close.items()))}")
    broken = []
    for case in sorted(cases, key=case_key):
        result = cases[case]
        outcomes = (result["behavior"], result["behaviorClose"])
        if all(outcome in ACCEPTED for outcome in outcomes):
            continue
        allowed = outcomes[0] == "NON-STRICT" and outcomes[1] in ACCEPTED and case in NON_STRICT_ALLOWED
        print(f"  {'non-strict (allowed)' if allowed else 'NOT OK'} {case}: behavior={outcomes[0]} "
              f"close={outcomes[1]} remoteCloseCode={result.get('remoteCloseCode')}")
        if not allowed:
            broken.append(case)
    return broken


def main(paths):
    broken = 0
    for path in paths:
        with open(path) as index:
            for agent, cases in sorted(json.load(index).items()):
                if not cases:
                    print(f"{agent}: no cases ran")
                    broken += 1
                    continue
                failing = judge(agent, cases)
                if agent.startswith("python-"):
                    print(f"  (reference agent: {len(failing)} case(s) would break the rule, not counted)")
                else:
                    broken += len(failing)
    print("autobahn: " + ("every case passes the rule" if broken == 0 else f"{broken} case(s) break the rule"))
    return 1 if broken else 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1:]))
