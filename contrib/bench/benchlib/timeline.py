"""Figures of a per-second series (queries a second at the upstream):
means over windows, peak-to-steady ratios and the two signs of hosts in
lockstep, a high max/median and a high autocorrelation at some lag.
Windows are [from, to) in whole seconds of the series."""


def window(series, span):
    a, b = span
    return series[max(0, int(a)):max(0, int(b))]


def mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")


def median(xs):
    s = sorted(xs)
    n = len(s)
    if not n:
        return float("nan")
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def ratio(a, b):
    return a / b if b else float("nan")


def max_over_median(xs):
    """The highest second against the typical one: about 1 for a flat
    series, the pulse's height for one pulse in many quiet seconds, inf
    for pulses with silence in between (a median of 0)."""
    if not xs or max(xs) == 0:
        return float("nan")
    m = median(xs)
    return max(xs) / m if m else float("inf")


def acf_peak(xs, min_lag=2, max_lag=20):
    """(r, lag): the highest autocorrelation of xs over lags min_lag ..
    min(max_lag, len/2) s, r = sum((x[t] - m)(x[t+k] - m)) / sum((x[t] -
    m)^2). Near 0 for noise; near 1 when the series repeats every lag s,
    as a fleet in lockstep does. (0.0, None) if xs is too short or flat."""
    n = len(xs)
    m = mean(xs)
    d = [x - m for x in xs]
    var = sum(v * v for v in d)
    best = (0.0, None)
    if var == 0:
        return best
    for k in range(min_lag, min(max_lag, n // 2) + 1):
        r = sum(d[t] * d[t + k] for t in range(n - k)) / var
        if best[1] is None or r > best[0]:
            best = (r, k)
    return best
