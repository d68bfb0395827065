#!/usr/bin/env bash
# check_layout.sh ROOT -- the dependency rules of the source tree, checked in CI:
#   1. no file under src_cxx/ includes a header that lives under src_cuda/ (src_cuda implements interfaces
#      declared in src_cxx; the API reaches the GPU side through GpuRegistry, never by including it);
#   2. no source anywhere (C, C++, CUDA, Fortran) includes through a relative "../" path (include paths are set
#      by CMake);
#   3. src_cxx/ and src_cuda/ hold one folder per family of cmake/qmmm_families.txt and no loose source files;
#   4. the family graph of that list: every #include "x" in src_cxx/F and src_cuda/F that names a header of the
#      project is a header of F or of a family F depends on (a programs family: also any public header); public
#      headers include only public headers of their family's dependencies (the core header none);
#   5. the umbrella header qmmm_accel.h includes exactly the public headers of the list, and nothing else; the
#      library's own sources (src_cxx) include the narrowest header, never the umbrella;
#   6. every family with a public header has its Fortran module, and the umbrella module uses exactly those.
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
list=cmake/qmmm_families.txt
[[ -f $list ]] || { echo "layout: $list is missing"; exit 1; }
families=$(awk '/^[a-z]/ { printf "%s%s", sep, $1; sep = " " }' "$list")
# src_cuda holds the GPU side of library families only.
cuda_families=$(awk '/^[a-z]/ && $4 == "library" { printf "%s%s", sep, $1; sep = " " }' "$list")
for fam in $families; do
  [[ -d src_cxx/$fam ]] || { echo "layout: family $fam ($list) has no folder src_cxx/$fam"; bad=1; }
done
for entry in src_cuda/*; do
  name=$(basename "$entry")
  if [[ -d $entry && " $families " == *" $name "* && " $cuda_families " != *" $name "* ]]; then
    echo "layout: $entry: only library families have a GPU side ($cuda_families)"
    bad=1
  fi
done
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
# (field_gpu.cu beside field_cpu.cpp; field_split_gpu.cu beside field_split.cpp), in its folder or a sub-folder of it.
for f in $(find src_cuda -type f); do
  fam=$(echo "$f" | cut -d/ -f2)
  case $(basename "$f") in
    "${fam}"_gpu.cu | "${fam}"_gpu.cuh | "${fam}"_gpu_kernels.cu | "${fam}"_*_gpu.cu | "${fam}"_*_gpu.cuh | \
      "${fam}"_*_gpu_kernels.cu) ;;
    *) echo "layout: $f does not follow <family>[_part]_gpu.cu / _gpu.cuh / _gpu_kernels.cu"; bad=1 ;;
  esac
done
# The family graph. Headers of the project: name -> family folder (a CMake template x.h.in stands for x.h).
header_owners=$(find src_cxx src_cuda -mindepth 2 -type f \( -name '*.h' -o -name '*.hpp' -o -name '*.cuh' -o -name '*.h.in' \) |
  awk -F/ '{ n = $NF; sub(/\.in$/, "", n); print n, $2 }')
# Every quoted include of every family source: "file family included-name".
family_includes=$(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' src_cxx src_cuda \
    --include='*.cpp' --include='*.hpp' --include='*.h' --include='*.c' --include='*.cu' --include='*.cuh' |
  sed -E 's/^([^:]+):[0-9]+:.*#[[:space:]]*include[[:space:]]*"([^"]+)".*/\1 \2/' |
  awk '{ split($1, p, "/"); print $1, p[2], $2 }')
if ! awk -v list="$list" -v owners="$header_owners" '
    BEGIN {
      while ((getline line < list) > 0) {
        if (line !~ /^[a-z]/) continue
        split(line, c, /[ \t]+/); fam = c[1]; kind[fam] = c[4]; deps[fam] = "," c[2] ","
        if (c[3] != "-") { public[c[3]] = fam; depof[fam] = c[2] }
      }
      public["qmmm_accel.h"] = "core"; public["qmmm_accel_version.h"] = "core"
      n = split(owners, o, "\n"); for (i = 1; i <= n; i++) { split(o[i], w, " "); owner[w[1]] = w[2] }
    }
    { file = $1; fam = $2; inc = $3; base = inc; sub(/.*\//, "", base)
      if (!(base in owner)) next                      # not a header of the project (a third-party one)
      if (file == "src_cxx/core/qmmm_accel.h") next  # the umbrella: checked against the list below
      if (base == "qmmm_accel.h" && kind[fam] == "library") {  # src_cxx and src_cuda alike
        print "layout: " file " includes the umbrella qmmm_accel.h (library sources include the narrowest header)"
        bad = 1; next }
      of = owner[base]
      if (of == fam || index(deps[fam], "," of ",")) {
        # a public header includes public headers only
        if ((file ~ /\/qmmm_accel[a-z_]*\.h$/) && !(base in public)) {
          print "layout: public header " file " includes " inc ", an internal header"; bad = 1 }
        next }
      if (kind[fam] == "programs" && (base in public)) next
      print "layout: " file " (family " fam ") includes " inc " of family " of ", not among its dependencies (" list ")"
      bad = 1 }
    END { exit bad }' <<< "$family_includes"; then
  bad=1
fi
# The core header is a leaf.
if grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' src_cxx/core/qmmm_accel_core.h; then
  echo "layout: src_cxx/core/qmmm_accel_core.h includes the headers above (the core header is a leaf)"
  bad=1
fi
# The umbrella header: exactly the list's public headers.
want=$(awk '/^[a-z]/ && $3 != "-" { print $3 }' "$list" | sort)
have=$(sed -nE 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]([^">]+)[">].*/\1/p' src_cxx/core/qmmm_accel.h | sort)
if [[ $want != "$have" ]]; then
  echo "layout: src_cxx/core/qmmm_accel.h includes [$(echo $have)], the list's public headers are [$(echo $want)]"
  bad=1
fi
# The Fortran side follows the same list: a hand-written module fortran_iface/qmmm_accel_<family>.f90 for every
# family with a public header (fortran_iface/CMakeLists.txt builds them from the list), and the umbrella module
# qmmm_accel uses exactly those.
want=$(awk '/^[a-z]/ && $3 != "-" { print "qmmm_accel_" $1 }' "$list" | sort)
for m in $want; do
  [[ -f fortran_iface/$m.f90 ]] || { echo "layout: fortran_iface/$m.f90 is missing (a family with a public header)"; bad=1; }
done
have=$(sed -nE 's/^[[:space:]]*use[[:space:]]+(qmmm_accel_[a-z0-9_]+).*/\1/Ip' fortran_iface/qmmm_accel.f90 | sort)
if [[ $want != "$have" ]]; then
  echo "layout: fortran_iface/qmmm_accel.f90 uses [$(echo $have)], the list's families with a header are [$(echo $want)]"
  bad=1
fi
if [[ $bad == 0 ]]; then echo "layout: ok"; else exit 1; fi
