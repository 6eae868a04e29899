#!/usr/bin/env bash
# The team's tested recipe (shared/tools/autobahn), kept in the project so that CI needs nothing beside it.
# Reproducible install of Autobahn|Testsuite 25.10.1 (wstest / fuzzingserver)
# on Debian 12 (bookworm), everything under ${AUTOBAHN_HOME:-$HOME/.cache/autobahn}.
#
# Why this is not simply `pip install autobahntestsuite`:
#   * autobahntestsuite is Python 2.7-only code (print statements, implicit
#     relative imports); on Python 3 it fails at import.
#   * bookworm packages neither `pypy` (PyPy for Python 2) nor `python2.7`
#     (only pypy3). So this script needs an existing CPython 2.7 interpreter:
#     $PYTHON27, else a pyenv 2.7.x (this machine has
#     ~/.pyenv/versions/2.7.18), else python2.7 on a standard path.
#     Nothing is downloaded from outside apt/PyPI.
#   * The 25.10.1 sdist/wheel's setup.py cannot find its requirements.txt, so
#     pip installs it with NO dependencies; the pinned Python-2 dependency set
#     (from its egg-info/requires.txt) is installed explicitly below.
#   * virtualenv >= 20.22 cannot create Python 2 environments, so a small
#     Python 3 "tools" venv with virtualenv<20.22 is used to create venv27.
#
# Result:
#   ${AUTOBAHN_HOME:-$HOME/.cache/autobahn}/venv27              Python 2.7 venv with wstest
#   ${AUTOBAHN_HOME:-$HOME/.cache/autobahn}/wstest_loopback.py  wstest launcher forcing 127.0.0.1 binds
# Idempotent; pass --clean to delete venv27/tools first.
set -euo pipefail

BASE=${AUTOBAHN_HOME:-$HOME/.cache/autobahn}
AUTOBAHNTESTSUITE_VERSION=25.10.1
export PIP_CACHE_DIR="$BASE/.cache/pip"       # keep caches under $BASE
export PIP_DISABLE_PIP_VERSION_CHECK=1
export VIRTUALENV_OVERRIDE_APP_DATA="$BASE/.cache/virtualenv"
export PYTHONWARNINGS=ignore::DeprecationWarning

mkdir -p "$BASE" "$BASE/reports"
cd "$BASE"

if [[ "${1:-}" == "--clean" ]]; then
    rm -rf "$BASE/venv27" "$BASE/tools" "$BASE/.cache"
fi

log() { printf '\n=== %s\n' "$*"; }

# ---------------------------------------------------------------- apt -------
log "apt: build tools (for wsaccel/ujson C extensions), python3-venv, iproute2 (ss)"
export DEBIAN_FRONTEND=noninteractive
need_pkgs=()
for p in gcc libc6-dev python3-venv iproute2 ca-certificates; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
        || need_pkgs+=("$p")
done
if ((${#need_pkgs[@]})); then
    apt-get update
    apt-get install -y --no-install-recommends "${need_pkgs[@]}"
fi
# Document (and use, should a future repo carry it) a packaged Python 2.
for p in python2.7 pypy; do
    cand=$(apt-cache policy "$p" 2>/dev/null | awk '/Candidate:/{print $2}')
    [[ "$cand" =~ ^[0-9] ]] || cand="<none>"
    echo "apt candidate for $p: $cand"
done

# ------------------------------------------------------- python 2.7 ---------
find_py27() {
    local c
    if [[ -n "${PYTHON27:-}" ]]; then echo "$PYTHON27"; return; fi
    local root="${PYENV_ROOT:-$HOME/.pyenv}"
    for c in "$root"/versions/2.7.*/bin/python2.7 /usr/bin/python2.7 /usr/local/bin/python2.7; do
        [[ -x "$c" ]] && { echo "$c"; return; }
    done
    if [[ "$(apt-cache policy python2.7 2>/dev/null | awk '/Candidate:/{print $2}')" =~ ^[0-9] ]]; then
        apt-get install -y --no-install-recommends python2.7 >&2 && echo /usr/bin/python2.7 && return
    fi
    return 1
}
log "locating a CPython 2.7 interpreter"
if ! PY27=$(find_py27); then
    cat >&2 <<'EOF'
ERROR: no Python 2.7 interpreter found. Debian bookworm does not package
python2.7 or pypy (PyPy2). Provide one and re-run with PYTHON27=/path/to/python2.7
(e.g. a pyenv-built 2.7.18, or the python2.7 package from Debian bullseye).
EOF
    exit 1
fi
"$PY27" -c 'import sys, ssl, zlib, ctypes; assert sys.version_info[:2] == (2, 7); print(sys.version.split()[0] + " " + ssl.OPENSSL_VERSION)'
echo "using $PY27"

# ------------------------------------------------------- virtualenvs --------
log "tools venv (Python 3) with virtualenv<20.22 (last series able to create py2.7 envs)"
[[ -x tools/bin/python ]] || /usr/bin/python3 -m venv tools
tools/bin/pip install -q 'virtualenv==20.21.1'

log "creating venv27"
[[ -x venv27/bin/python ]] || \
    tools/bin/virtualenv -p "$PY27" venv27

log "writing requirements-py27.txt / constraints-py27.txt"
cat > requirements-py27.txt <<'EOF'
# Direct deps of autobahntestsuite 25.10.1, copied from its
# autobahntestsuite.egg-info/requires.txt ("pinned dependency set for
# Python 2.7 / Autobahn 0.10.9"). [accelerate] = wsaccel+ujson C speedups
# (UTF-8 validation / XOR masking); they cut a full client run ~2.5x.
setuptools==44.0.0
txaio==2.1.0
incremental==16.10.1
pyOpenSSL==19.1.0
cryptography==3.3.2
Twisted==19.10.0
zope.interface==4.6.0
jinja2==2.11.3
markupsafe==1.1.1
Werkzeug==1.0.1
klein==17.10.0
service_identity==18.1.0
unittest2==1.1.0
six==1.16.0
autobahn[accelerate,twisted]==0.10.9
EOF
cat > constraints-py27.txt <<'EOF'
# Full, tested resolution (pip freeze of a working venv27, 2.7.18 / x86_64)
attrs==21.4.0
autobahn==0.10.9
Automat==22.10.0
cffi==1.15.1
constantly==15.1.0
cryptography==3.3.2
enum34==1.1.10
hyperlink==21.0.0
idna==2.10
incremental==16.10.1
ipaddress==1.0.23
Jinja2==2.11.3
klein==17.10.0
linecache2==1.0.0
MarkupSafe==1.1.1
pyasn1==0.5.1
pyasn1-modules==0.3.0
pycparser==2.21
PyHamcrest==1.10.1
pyOpenSSL==19.1.0
service-identity==18.1.0
setuptools==44.0.0
six==1.16.0
traceback2==1.4.0
Twisted==19.10.0
txaio==2.1.0
typing==3.10.0.0
ujson==1.35
unittest2==1.1.0
Werkzeug==1.0.1
wsaccel==0.6.2
zope.interface==4.6.0
EOF

log "pip install (Python 2.7) dependencies"
venv27/bin/pip install -r requirements-py27.txt -c constraints-py27.txt
log "pip install autobahntestsuite==$AUTOBAHNTESTSUITE_VERSION (--no-deps, see header)"
venv27/bin/pip install --no-deps "autobahntestsuite==$AUTOBAHNTESTSUITE_VERSION"
venv27/bin/pip check

# --------------------------------------------------- loopback launcher ------
log "writing wstest_loopback.py"
cat > wstest_loopback.py <<'EOF'
# -*- coding: utf-8 -*-
"""
Python 2.7 launcher for Autobahn|Testsuite's `wstest` that forces every
listening socket (WebSocket port and optional embedded web port) to bind to
127.0.0.1 only.

Background: autobahn 0.10.9's listenWS() and wstest's web server call
reactor.listenTCP(port, factory, backlog, interface='') i.e. they bind to ALL
interfaces, regardless of the host in the spec's "url". We wrap the reactor's
listenTCP/listenSSL so that an empty interface becomes 127.0.0.1.
Usage is identical to `wstest` (all arguments are passed through).
"""
import sys

# Importing the package first lets autobahntestsuite.choosereactor install the
# epoll reactor exactly as the stock `wstest` entry point does.
import autobahntestsuite  # noqa: F401  (installs reactor)
from twisted.internet import reactor

BIND = "127.0.0.1"

_listenTCP = reactor.listenTCP
_listenSSL = reactor.listenSSL


def _listen_tcp(port, factory, backlog=50, interface=""):
    return _listenTCP(port, factory, backlog, interface or BIND)


def _listen_ssl(port, factory, contextFactory, backlog=50, interface=""):
    return _listenSSL(port, factory, contextFactory, backlog, interface or BIND)


reactor.listenTCP = _listen_tcp
reactor.listenSSL = _listen_ssl

from autobahntestsuite.wstest import run  # noqa: E402

if __name__ == "__main__":
    sys.argv[0] = "wstest"
    sys.exit(run())
EOF

# ------------------------------------------------------------ check ---------
log "smoke test"
venv27/bin/wstest -a
venv27/bin/python -c 'import autobahntestsuite.fuzzing, wsaccel.utf8validator; print("fuzzing module + wsaccel import OK")'
