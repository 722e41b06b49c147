# plot.gp - cost per object operation against live objects and against
# objects per page.  run-bench.py --plot writes the data and runs:
#   gnuplot -e "datadir='DIR'; outfile='doc/bench-objops.png'; lo='1000'; hi='1000000'; \
#               label='...'; basedir='BASELINE-DIR'; baselabel='kernel-style baseline'" plot.gp
# (PNG when outfile ends in png, else SVG; basedir is optional).
if (!exists("datadir")) datadir = "."
if (!exists("outfile")) outfile = "bench-objops.png"
if (!exists("lo")) lo = "1000"
if (!exists("hi")) hi = "1000000"
if (!exists("label")) label = "this build"
if (!exists("baselabel")) baselabel = "kernel-style baseline"
base = exists("basedir")

if (outfile[strlen(outfile)-2:] eq "png") {
	set terminal pngcairo size 1100,460 font "sans,10"
} else {
	set terminal svg size 1100,460 dynamic font "sans,12"
}
set output outfile
set multiplot layout 1,2 title "libodebug: ns per object operation (free/init/activate/deactivate on a random live object), 1 thread"
set grid
set key top left Left reverse
set logscale xy
set ylabel "ns per operation"
set format x "%.0s%c"
set yrange [5:*]
# the issue's goals: 40 ns with 1 K live objects, 150 ns with 1 M
set arrow 1 from graph 0, first 40 to graph 1, first 40 nohead dt 2 lc rgb "gray40"
set arrow 2 from graph 0, first 150 to graph 1, first 150 nohead dt 2 lc rgb "gray40"
set label 1 "goal, 1 K live" at graph 0.99, first 34 right tc rgb "gray40"
set label 2 "goal, 1 M live" at graph 0.99, first 128 right tc rgb "gray40"

set style line 1 lw 2 pt 7 lc rgb "#1f77b4"
set style line 2 lw 2 pt 5 lc rgb "#ff7f0e"
set style line 3 lw 1.5 pt 6 dt 2 lc rgb "#1f77b4"
set style line 4 lw 1.5 pt 4 dt 2 lc rgb "#ff7f0e"

set xlabel "live objects"
set xrange [700:1400000]
if (base) {
	plot datadir."/objops-live.dat" using 1:2 with linespoints ls 1 title label.": sparse, 1 per page", \
	     ""                         using 1:3 with linespoints ls 2 title label.": dense, 64 per page", \
	     basedir."/objops-live.dat" using 1:2 with linespoints ls 3 title baselabel.": sparse", \
	     ""                         using 1:3 with linespoints ls 4 title baselabel.": dense"
} else {
	plot datadir."/objops-live.dat" using 1:2 with linespoints ls 1 title label.": sparse, 1 per page", \
	     ""                         using 1:3 with linespoints ls 2 title label.": dense, 64 per page"
}

set xlabel "objects per 4 KiB page"
set format x "%g"
set xtics (1, 2, 4, 8, 16, 32, 64)
set xrange [0.8:80]
if (base) {
	plot datadir."/objops-density.dat" using 1:3 with linespoints ls 1 title label.": ".hi." live", \
	     ""                            using 1:2 with linespoints ls 2 title label.": ".lo." live", \
	     basedir."/objops-density.dat" using 1:3 with linespoints ls 3 title baselabel.": ".hi." live", \
	     ""                            using 1:2 with linespoints ls 4 title baselabel.": ".lo." live"
} else {
	plot datadir."/objops-density.dat" using 1:3 with linespoints ls 1 title label.": ".hi." live", \
	     ""                            using 1:2 with linespoints ls 2 title label.": ".lo." live"
}
unset multiplot
