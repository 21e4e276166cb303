"""Statistics of the aggregate-latency benchmark, following wide-area measurement practice.

Each point (route, message size P, count X) is measured in batches; a batch gives one sample
t = T / X. The first batches warm the path up (connections opening, TCP slow start) and are
dropped; of the rest we report the median and the minimum, and mark the samples above the upper
fence Q3 + 1.5 IQR as outliers (kept in the raw CSV, flagged, never silently removed).
"""

import statistics

# Tukey's fence multiplier: samples beyond Q3 + 1.5 IQR are outliers.
FENCE_IQR_MULTIPLIER = 1.5


def drop_warmup(samples, warmup):
    """The samples after the first `warmup` ones (the warm-up batches)."""
    if warmup < 0:
        raise ValueError(f"warm-up batches must be >= 0, not {warmup}")
    return list(samples[warmup:])


def quartiles(samples):
    """(Q1, median, Q3) with the 'inclusive' method (linear interpolation between order
    statistics, the same as numpy's default); a single sample is its own quartiles."""
    if not samples:
        raise ValueError("no samples")
    if len(samples) == 1:
        return samples[0], samples[0], samples[0]
    q1, median, q3 = statistics.quantiles(samples, n=4, method="inclusive")
    return q1, median, q3


def upper_fence(samples):
    q1, _, q3 = quartiles(samples)
    return q3 + FENCE_IQR_MULTIPLIER * (q3 - q1)


def summarize(samples, warmup):
    """Summary of one point's samples (in batch order): the warm-up batches are dropped, the
    rest give median, minimum, quartiles, the upper fence and which samples lie beyond it."""
    measured = drop_warmup(samples, warmup)
    if not measured:
        raise ValueError(f"{len(samples)} samples leave none after {warmup} warm-up batches")
    q1, median, q3 = quartiles(measured)
    fence = upper_fence(measured)
    return {
        "n": len(measured),
        "median": median,
        "minimum": min(measured),
        "q1": q1,
        "q3": q3,
        "upper_fence": fence,
        # Indexes into `samples` (batch number - 1) of the outliers.
        "outliers": [warmup + i for i, value in enumerate(measured) if value > fence],
    }


def floor_per_message(rtt_s, count, size_bytes, rate_bit_s):
    """The physical floor t_min = R / X + P / B: one round trip shared by the X messages, plus
    serialisation at the link rate (rate 0 means unlimited: no serialisation term)."""
    serialisation = size_bytes * 8 / rate_bit_s if rate_bit_s > 0 else 0.0
    return rtt_s / count + serialisation


def throughput_bit_s(size_bytes, per_message_s):
    """Goodput of a stream of P-byte messages delivered every t seconds."""
    return size_bytes * 8 / per_message_s
