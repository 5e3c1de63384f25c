"""faultproxy: the fault-injecting DNS upstream of the tests and benchmarks.

faultproxy.py   the program (run it with /usr/bin/python3)
driver.py       FaultProxy: start it, drive its control socket, stop it
perf.py         throughput through it, measured with dnsperf
scenarios/      schedules (fault phases as data)
"""
