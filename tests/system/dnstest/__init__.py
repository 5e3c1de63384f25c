"""dnstest: the harness of dnsdamper's system tests.

ports   free loopback ports, and the loopback-only guard
proc    start and stop the processes a test owns, by PID
named   BindServer: a real BIND 9 `named` on a free loopback port
daemon  Dnsdamper: the daemon under test, its config, start, reload, stop
query   dnspython queries over UDP and TCP with bounded timeouts
wire    raw packet builders for malformed input, TCP framing
ttl     the RFC arithmetic the tests expect (TTL decrement, RFC 2308)
stale   stale answers as RFC 8767 / RFC 8914 say they look (TTL, EDE 3)
zonetext  zone files with short TTLs for the tests' own named instances
upstream  Blackhole: a UDP upstream that reads and never answers;
          Recorder: one that logs each query and drops, relays or answers
checks  still_serving(): the daemon is alive and answers a normal query
control  the control socket over HTTP/1.1, Prometheus text parsed,
         dnsdamperctl
srvcmd  dnsdamper-srv, always told a loopback resolver with -s
sdnotify  systemd's side: a NOTIFY_SOCKET, and a wrapper for LISTEN_PID,
          WATCHDOG_PID and passed descriptors
deadline  SIGALRM deadline for a test's setup and body
"""
