# posterior: above, the probability of each of the five most probable
# commits at the engine's last decision (the culprit, or the likely one,
# in red); below, the probability of each commit that was ever among the
# five over the job's decisions, with the engine's phases marked.
# Loaded after vars.gp: TITLE, SUBTITLE, NTOP, NC, NDEC, CAND[]; data in
# top.dat and over.dat, tics and phase marks in top_tics.gp, phases.gp.
set multiplot layout 2,1 title TITLE . "\n" . SUBTITLE
set datafile missing '?'
set grid ytics lc rgb '#dddddd'
set yrange [0:1.05]
set ytics 0.25 nomirror
set ylabel 'P(culprit)'
set xrange [0.3:NTOP + 0.7]
load 'top_tics.gp'
set xtics font ',9' nomirror
set style fill solid 0.7 border -1
set boxwidth 0.6
set key off
set title 'at the last decision'
plot 'top.dat' using 1:($3 > 0 ? NaN : $2) with boxes lc rgb '#1f77b4', \
     '' using 1:($3 > 0 ? $2 : NaN) with boxes lc rgb '#d62728', \
     '' using 1:2:(sprintf('%.3f', $2)) with labels offset 0,0.8 font ',9'
unset xtics
unset xrange
set xtics auto nomirror
set xrange [0:*]
set xlabel 'seconds since the job was submitted'
set title sprintf('over the %d decisions', NDEC)
set key outside right center vertical font ',9'
load 'phases.gp'
array COL[8] = ['#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#17becf']
plot for [k = 0:NC - 1] 'over.dat' index k using 1:2 with linespoints pt 7 ps 0.5 \
	lc rgb COL[k % 8 + 1] title CAND[k + 1]
unset multiplot
