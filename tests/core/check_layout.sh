#!/usr/bin/env bash
# check_layout.sh ROOT -- the dependency rules of the source tree, checked in CI:
#   1. no file under src_cxx/ includes a header that lives under src_cuda/ (src_cuda implements interfaces
#      declared in src_cxx; the API reaches the GPU side through GpuRegistry, never by including it);
#   2. no source anywhere (C, C++, CUDA, Fortran) includes through a relative "../" path (include paths are set
#      by CMake);
#   3. src_cxx/ and src_cuda/ hold one folder per family and no loose source files.
set -u
root=${1:?usage: check_layout.sh ROOT}
cd "$root" || exit 2
bad=0
cuda_headers=$(find src_cuda -type f \( -name '*.cuh' -o -name '*.h' -o -name '*.hpp' \) -printf '%f\n' | sort -u)
# One pass (a process per include line took 36 s on a loaded 2-core machine): file and included path per line,
# the path's last component looked up among the src_cuda header names.
if ! grep -rnE '^[[:space:]]*#[[:space:]]*include' src_cxx --include='*.cpp' --include='*.hpp' --include='*.h' --include='*.c' |
     sed -E 's/^([^:]+):[0-9]+:.*#[[:space:]]*include *[<"]([^">]+)[">].*/\1 \2/' |
     awk -v hdrs="$cuda_headers" 'BEGIN { n = split(hdrs, a, "\n"); for (i = 1; i <= n; i++) h[a[i]] = 1 }
       { base = $2; sub(/.*\//, "", base)
         if ((base in h) || $2 ~ /src_cuda/) { print "layout: " $1 " includes " $2 ", a src_cuda header"; bad = 1 } }
       END { exit bad }'; then
  bad=1
fi
srcs=(src_cxx src_cuda tests bench vmc_driver fortran_iface)
if grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]\.\./' "${srcs[@]}" \
     --include='*.cpp' --include='*.hpp' --include='*.h' --include='*.c' --include='*.cu' --include='*.cuh'; then
  echo "layout: the includes above use ../ paths"
  bad=1
fi
# Fortran: the INCLUDE line (any case, either quote) and the preprocessor's #include, in free and fixed form.
if grep -rniE '^[[:space:]]*#?[[:space:]]*include[[:space:]]*["'"'"'<]\.\./' "${srcs[@]}" \
     --include='*.f90' --include='*.F90' --include='*.f' --include='*.F'; then
  echo "layout: the Fortran includes above use ../ paths"
  bad=1
fi
families="core field cube dcs rdf mpi tools"
for top in src_cxx src_cuda; do
  for entry in "$top"/*; do
    name=$(basename "$entry")
    if [[ -f $entry ]]; then
      echo "layout: $entry is a loose file (every source belongs to a family folder)"
      bad=1
    elif [[ " $families " != *" $name "* ]]; then
      echo "layout: $entry is not a family folder ($families)"
      bad=1
    fi
  done
done
# The GPU side of a family is named after its CPU twin: <family>[_part]_gpu.cu, _gpu.cuh or _gpu_kernels.cu
# (field_gpu.cu beside field_cpu.cpp; field_split_gpu.cu beside field_split.cpp).
for f in $(find src_cuda -type f); do
  fam=$(basename "$(dirname "$f")")
  case $(basename "$f") in
    "${fam}"_gpu.cu | "${fam}"_gpu.cuh | "${fam}"_gpu_kernels.cu | "${fam}"_*_gpu.cu | "${fam}"_*_gpu.cuh | \
      "${fam}"_*_gpu_kernels.cu) ;;
    *) echo "layout: $f does not follow <family>[_part]_gpu.cu / _gpu.cuh / _gpu_kernels.cu"; bad=1 ;;
  esac
done
if [[ $bad == 0 ]]; then echo "layout: ok"; else exit 1; fi
