# timeline: every measured commit of a job in range order (x: its place
# among the measured, labelled with its short id), its runs as points
# (a colour per agent), its hmean with a CV error bar (hmean x (1 +- CV)),
# the ends and the culprit (or, undecided, the most probable commit)
# marked. Loaded after vars.gp: TITLE, SUBTITLE, UNIT, N, FOCUS_X, FOCUS,
# NAGENTS, AGENT[], the xtics; data in runs.dat and commits.dat.
set title TITLE . "\n" . SUBTITLE
set ylabel UNIT
set xlabel 'measured commits, in range order (good end left)'
set xrange [0.4:N + 0.6]
set xtics rotate by 35 right font ',9' nomirror
set ytics nomirror
set grid ytics lc rgb '#dddddd'
set offsets 0, 0, graph 0.05, graph 0.05
set key outside right top vertical
set bmargin 8
set datafile missing '?'
if (FOCUS_X > 0) set arrow 1 from FOCUS_X, graph 0 to FOCUS_X, graph 1 nohead lc rgb '#d62728' dt 2 lw 1.5
if (FOCUS_X > 0) set label 1 FOCUS at FOCUS_X, graph 1 offset 0.5,-1 tc rgb '#d62728'
array COL[8] = ['#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#17becf']
plot for [a = 0:NAGENTS - 1] 'runs.dat' using 1:($3 == a ? $2 : NaN) with points pt 7 ps 0.45 \
	lc rgb COL[a % 8 + 1] title 'runs @' . AGENT[a + 1], \
     'commits.dat' using 1:2:3:4 with yerrorbars pt 5 ps 0.9 lw 1.5 lc rgb 'black' title 'hmean (CV)', \
     '' using 1:($6 == 1 ? $2 : NaN) with points pt 9 ps 2.2 lc rgb '#2ca02c' title 'good end', \
     '' using 1:($6 == 2 ? $2 : NaN) with points pt 11 ps 2.2 lc rgb '#d62728' title 'bad end', \
     '' using 1:($6 == 3 || $6 == 4 ? $2 : NaN) with points pt 13 ps 2.4 lc rgb '#d62728' title FOCUS, \
     '' using 1:($6 == 5 ? $2 : NaN) with points pt 12 ps 2 lc rgb '#555555' title 'parent'
