# gnuplot -e "dir='OUT_DIR'" bench/vmc/precision_study.gp -> OUT_DIR/precision_study.png
# |running mean energy - CPU double's| per block for each CUDA precision (log scale; exact zeros drawn at 1e-16).
if (!exists("dir")) dir = "precision_study_out"
set terminal pngcairo size 900,560 font "sans,11"
set output dir."/precision_study.png"
set title "Glycine fragment 1 (268,938 cells): running energy deviation from CPU double"
set xlabel "block"
set ylabel "|E_{running} - E_{running}(CPU double)|  (hartree)"
set logscale y
set format y "10^{%L}"
set yrange [1e-16:1e0]
set key top right opaque box
set grid
clip(x) = abs(x) > 1e-16 ? abs(x) : 1e-16
dat = dir."/precision_study.dat"
plot dat using 1:(clip($2)) with linespoints lw 2 pt 7 title "CUDA double", \
     dat using 1:(clip($3)) with linespoints lw 2 pt 5 title "CUDA single", \
     dat using 1:(clip($4)) with linespoints lw 2 pt 9 title "CUDA mixed", \
     1e-3 with lines dt 2 lc rgb "gray40" title "1 mhartree (chemical accuracy)"
