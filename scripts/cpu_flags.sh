#!/usr/bin/env bash
# Print the llama.cpp CMake flags for the CPU this runs on, derived from /proc/cpuinfo.
# Native builds (-march=native) crashed in AMX kernels on one machine, and a build that
# forces AVX-512 dies with "Illegal instruction" on a CPU without it: so every ISA switch
# is set explicitly from what this CPU reports, and AMX stays off.
# Usage: cpu_flags.sh cmake   -> CMake arguments
#        cpu_flags.sh tag     -> a short tag naming the instruction sets (for the wheel cache)
set -euo pipefail
flags=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
has() { [[ "$flags" == *" $1 "* ]]; }
onoff() { if has "$1"; then echo ON; else echo OFF; fi; }
declare -A opt=(
  [AVX]=$(onoff avx) [AVX2]=$(onoff avx2) [FMA]=$(onoff fma) [F16C]=$(onoff f16c)
  [BMI2]=$(onoff bmi2) [AVX_VNNI]=$(onoff avx_vnni)
  [AVX512]=$(onoff avx512f) [AVX512_VBMI]=$(onoff avx512vbmi)
  [AVX512_VNNI]=$(onoff avx512_vnni) [AVX512_BF16]=$(onoff avx512_bf16)
)
case "${1:-cmake}" in
  cmake)
    out="-DGGML_NATIVE=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
    for k in AVX AVX2 FMA F16C BMI2 AVX_VNNI AVX512 AVX512_VBMI AVX512_VNNI AVX512_BF16; do
      out+=" -DGGML_$k=${opt[$k]}"
    done
    echo "$out" ;;
  tag)
    tag=""
    for k in AVX AVX2 FMA F16C BMI2 AVX_VNNI AVX512 AVX512_VBMI AVX512_VNNI AVX512_BF16; do
      [ "${opt[$k]}" = ON ] && tag+="${k,,}-"
    done
    echo "${tag%-}" ;;
  required)
    # the /proc/cpuinfo flags the build uses: checked before loading the model
    for f in avx avx2 fma f16c bmi2 avx_vnni avx512f avx512vbmi avx512_vnni avx512_bf16; do
      has "$f" && printf '%s ' "$f"
    done
    echo ;;
  *) echo "usage: $0 cmake|tag|required" >&2; exit 2 ;;
esac
