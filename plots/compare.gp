# compare: the hmean of the good end, the parent, the culprit and the bad
# end of a job, with a CV error bar (hmean x CV), next to the same commits
# in the jobs of the same range under other kernel command line variants
# ("mitigations=off"): one group per kernel, one bar per variant.
# Loaded after vars.gp: TITLE, SUBTITLE, UNIT, NV, NK, VARIANT[];
# compare.dat: a row per kernel, then hmean and its bar per variant.
set title TITLE . "\n" . SUBTITLE
set ylabel UNIT
set style data histograms
set style histogram errorbars gap 1.5 lw 1.2
set style fill solid 0.6 border -1
set boxwidth 0.9
set datafile missing '?'
set yrange [0:*]
set xtics rotate by 15 right font ',9' nomirror
set ytics nomirror
set grid ytics lc rgb '#dddddd'
set key outside right top vertical
array COL[8] = ['#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#17becf']
plot for [k = 1:NV] 'compare.dat' using (column(2 * k)):(column(2 * k + 1)):xtic(1) \
	lc rgb COL[(k - 1) % 8 + 1] title VARIANT[k]
