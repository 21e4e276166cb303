"""The multi-site part of ./longpipe bench --collectives (apps/bench/collectives --sites N).

N sites of netem/wan's multi-site mode (netem/README.md, "Multi-site mode"), each behind its own
access link: where the ranks run (site_hosts, the one place that decides it), which site each rank
is on (rank_sites), the Open MPI job across them (job_argv, with site-rsh as the launch agent), and
each collective's limit on this topology (limit_ms).

The limit of a collective across access links of different delays and rates is the slowest
relevant path plus the busiest access link: the largest one-way delay over the site pairs that must
exchange data (a packet from site S to site T crosses S's access link up and T's down: delay(S) +
delay(T)), plus the largest time any one access-link direction needs for the bytes that must cross
it at its rate. The bytes are what the collective must move between sites without relaying through
a third site: Bcast the data once from the root's site to every other site; Allreduce every site's
data to every other site; Gather every block of another site to the root; Alltoall every block
between ranks at different sites. With two sites this is the two-site benchmark's limit.
"""

import os
import re
import shutil
import signal
import subprocess
import tempfile

# Default access-link profiles, cycled when --sites is larger: a satellite, a transatlantic fibre and a
# thin 2 Mbit/s line, so that the sites differ in delay and in rate.
DEFAULT_SITE_PROFILES = ["geo", "transatlantic", "thin"]
# The sites' core network: gateways reach each other only through it (netem/wan --sites).
CORE_NETWORK = "172.31.0.0/24"


def site_specs(count, profiles_text):
    """One netem/wan --sites entry (PROFILE[:opt=v...]) per site: --site-profiles or the defaults."""
    specs = [s for s in profiles_text.split(",") if s] if profiles_text else []
    if not specs:
        specs = [DEFAULT_SITE_PROFILES[i % len(DEFAULT_SITE_PROFILES)] for i in range(count)]
    if len(specs) != count:
        raise SystemExit(f"collectives: --site-profiles names {len(specs)} sites, --sites {count}")
    return specs


def access_links(specs, profile_values):
    """Per site {"up": (one-way s, bit/s), "down": (one-way s, bit/s)}; rate 0 (lan) is unlimited.

    profile_values(name) gives a profile's (one-way delay s, rate bit/s); the entry's delay=, rate=
    and their -back forms (the core -> gateway direction) override it, as netem/wan applies them."""
    links = []
    for spec in specs:
        name, *overrides = spec.split(":")
        delay_s, rate = profile_values(name)
        values = {"delay": delay_s * 1000, "rate": rate / 1e6}
        for override in overrides:
            key, _, value = override.partition("=")
            if key in ("delay", "rate", "delay-back", "rate-back"):
                values[key] = float(value)
        up = (values["delay"] / 1000, values["rate"] * 1e6 or float("inf"))
        down = (values.get("delay-back", values["delay"]) / 1000,
                values.get("rate-back", values["rate"]) * 1e6 or float("inf"))
        links.append({"up": up, "down": down})
    return links


def site_hosts(count):
    """The host each site's ranks run on: its gateway host s<S>-gw (172.31.0.S), the hosts that
    reach each other (with --no-firewall on every port), so that Open MPI alone runs there too. The
    one place that places ranks: private compute hosts behind the gateways would change only this."""
    return [f"s{site + 1}-gw" for site in range(count)]


def rank_sites(placement, ranks_per_site, count):
    """The site (0-based) of each rank: block (site 0 first) or round-robin."""
    total = ranks_per_site * count
    if placement == "block":
        return [rank // ranks_per_site for rank in range(total)]
    return [rank % count for rank in range(total)]


def pair_bytes(operation, size, sites_of_ranks, count):
    """{(S, T): bytes} that must go from site S to site T for one call (root: rank 0)."""
    per_site = [sites_of_ranks.count(s) for s in range(count)]
    root = sites_of_ranks[0]
    flows = {}
    for s in range(count):
        for t in range(count):
            if s == t:
                continue
            if operation == "barrier":
                flows[(s, t)] = 0
            elif operation == "bcast" and s == root:
                flows[(s, t)] = size
            elif operation == "allreduce":
                flows[(s, t)] = size
            elif operation == "gather" and t == root:
                flows[(s, t)] = per_site[s] * size
            elif operation == "alltoall":
                flows[(s, t)] = per_site[s] * per_site[t] * size
            elif operation not in ("bcast", "gather"):
                raise ValueError(operation)
    return flows


def limit_ms(operation, size, sites_of_ranks, links):
    """The limit (module docstring): slowest relevant path's one-way delay + busiest access link."""
    flows = pair_bytes(operation, size, sites_of_ranks, len(links))
    delay = max((links[s]["up"][0] + links[t]["down"][0] for (s, t) in flows), default=0.0)
    up = [0] * len(links)
    down = [0] * len(links)
    for (s, t), count in flows.items():
        up[s] += count
        down[t] += count
    busiest = max([8 * up[s] / links[s]["up"][1] for s in range(len(links))] +
                  [8 * down[t] / links[t]["down"][1] for t in range(len(links))])
    return 1000 * (delay + busiest)


def write_hostfile(path, count, ranks_per_site):
    with open(path, "w") as f:
        for host in site_hosts(count):
            f.write(f"{host} slots={ranks_per_site}\n")


def job_argv(wan, run_dir, count, ranks_per_site, placement, mca, exports, program_argv):
    """The Open MPI job across the sites: mpirun in site 1's host, the other sites' orteds started
    by site-rsh (netem/wan exec instead of a login), Open MPI's traffic on the core network."""
    hostfile = os.path.join(run_dir, "hostfile")
    write_hostfile(hostfile, count, ranks_per_site)
    here = os.path.dirname(os.path.abspath(__file__))
    argv = [wan, "exec", site_hosts(count)[0], "mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none",
            "--hostfile", hostfile, "-np", str(count * ranks_per_site),
            "--map-by", "slot" if placement == "block" else "node",
            "--mca", "btl", "tcp,self", "--mca", "btl_tcp_if_include", CORE_NETWORK,
            "--mca", "oob_tcp_if_include", CORE_NETWORK, "--mca", "plm_rsh_agent", os.path.join(here, "site-rsh")]
    for key, value in mca:
        argv += ["--mca", key, value]
    for export in exports:
        argv += ["-x", export]
    return argv + program_argv


def measure_rtts(wan, tool, count, ping_count):
    """{"s1-gw-s2-gw": RTT ms, ...} for every pair of site hosts (ping; tool runs a command)."""
    hosts = site_hosts(count)
    rtts = {}
    for i, source in enumerate(hosts):
        for target in hosts[i + 1:]:
            out = tool([wan, "exec", source, "ping", "-n", "-q", "-c", str(ping_count), "-i", "0.2", target])
            match = re.search(r"= [\d.]+/([\d.]+)/", out)
            if not match:
                raise RuntimeError(f"cannot read the RTT from ping:\n{out}")
            rtts[f"{source}-{target}"] = float(match.group(1))
    return rtts


def run_job(wan, env, count, ranks_per_site, placement, mca, exports, program_argv, timeout):
    """Runs one job (job_argv) and returns its CompletedProcess (status 124 after `timeout` s). Its
    processes carry LP_COLLECTIVES_RUN=<run dir>, by which any leftover (a timeout, a crash) is
    ended before the next job."""
    run_dir = tempfile.mkdtemp(prefix="lp-coll-run.")
    argv = job_argv(wan, run_dir, count, ranks_per_site, placement, mca, exports, program_argv)
    try:
        return subprocess.run(argv, env=dict(env, LP_COLLECTIVES_RUN=run_dir), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as error:
        out = error.stdout.decode(errors="replace") if isinstance(error.stdout, bytes) else (error.stdout or "")
        return subprocess.CompletedProcess(argv, 124, out, f"timed out after {timeout:g} s")
    finally:
        for pid in run_pids(run_dir):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        shutil.rmtree(run_dir, ignore_errors=True)


def run_pids(tag):
    """Live processes whose environment carries LP_COLLECTIVES_RUN=tag (a job's leftovers)."""
    pids = []
    needle = f"LP_COLLECTIVES_RUN={tag}".encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if needle in f.read().split(b"\0"):
                    pids.append(int(entry))
        except OSError:
            continue
    return pids
