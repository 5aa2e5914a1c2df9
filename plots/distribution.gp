# distribution: the culprit (or, undecided, the most probable commit)
# against its parent and the ends: a box per commit (a box per commit and
# agent when more than one agent measured them) from the first to the
# third quartile, the median across it, whiskers to the least and the
# largest run, and the runs drawn over it. The quartiles are computed by
# bisectd (gnuplot draws no box for fewer than 4 points).
# Loaded after vars.gp: TITLE, SUBTITLE, UNIT, NB, XMAX, NAGENTS, AGENT[],
# the xtics; box.dat has a row per box, dist.dat the runs.
set title TITLE . "\n" . SUBTITLE
set ylabel UNIT
set xrange [0:XMAX]
set xtics rotate by 25 right font ',9' nomirror
set ytics nomirror
set grid ytics lc rgb '#dddddd'
set offsets 0, 0, graph 0.05, graph 0.05
set key outside right top vertical
set bmargin 7
set lmargin 16
set style fill solid 0.25 border -1
set boxwidth 0.6
array COL[8] = ['#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#17becf']
plot 'box.dat' using 1:2:3:4:5 with candlesticks whiskerbars 0.5 lc rgb '#555555' title 'quartiles, min..max', \
     '' using 1:6:6:6:6 with candlesticks lw 2 lc rgb 'black' title 'median', \
     for [a = 0:NAGENTS - 1] 'dist.dat' using 1:($3 == a ? $2 : NaN) with points pt 7 ps 0.5 \
	lc rgb COL[a % 8 + 1] title 'runs @' . AGENT[a + 1]
