# What /proc says of a running agent, for the benchmark scripts that
# compare two of them side by side (source it).

# ticks PID: the CPU time the process used so far, user and system, in
# clock ticks of 1/hz s.
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# rss PID: its resident memory now, in KiB.
rss() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
hz=$(getconf CLK_TCK)
