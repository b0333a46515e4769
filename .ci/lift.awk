# Gives each process's autogroup the process's own nice where the process
# is niced below its autogroup: .ci/test runs it once a second while the
# suite runs at nice -10 in an autogroup at -10.
#
# Why: a process that calls setsid starts an autogroup of its own at nice
# 0 whatever its own nice, and Linux shares the cores between autogroups
# before nice counts within one. PostgreSQL's postmaster puts every child
# (each backend, the checkpointer, the WAL writer) in a session of its
# own, so the tests' PostgreSQL servers, niced -10 with the suite, ran at a
# tenth of its weight whenever the suite was busy: with three busy loops
# in the suite's autogroup, a service's first connection to its store
# timed out in SCRAM authentication after 10 s (the example service's store test, every
# time), and with this running beside them it passed. Processes at nice 0
# or above (another job's, in sessions of their own) are never touched.
#
# It prints "nice path" lines and the shell writes them: awk (mawk here)
# ends with status 2 when a write to a file fails, and a process that
# exits between the read and the write (or whose autogroup refuses the
# value) made every later process go unlifted for the rest of the run.
BEGIN {
  while (("ls /proc" | getline d) > 0) {
    if (d !~ /^[0-9]+$/) continue
    f = "/proc/" d "/stat"
    if ((getline s < f) <= 0) { close(f); continue }
    close(f)
    # The fields after the command's name (which may hold spaces): the
    # state is the first, the nice the seventeenth.
    sub(/^.*\) /, "", s)
    split(s, a, " ")
    nice = a[17] + 0
    if (nice >= 0) continue
    g = "/proc/" d "/autogroup"
    if ((getline ag < g) <= 0) { close(g); continue }
    close(g)
    n = ag
    sub(/.* nice /, "", n)
    if (nice < n + 0) print nice, g
  }
  close("ls /proc")
}
