"""The `serve` case of scripts/bench: `livemux serve` with 1, 300 and 1000 HTTP viewers of /live.flv
and /live.asf (scripts/loadgen.c, one process), then nginx-rtmp fanning the same stream out to 1
and 300 rtmpdump players, in the same run. Server CPU and RSS come from /proc/PID."""
import json, os, resource, shutil, signal, socket, statistics, subprocess, sys, time

STREAM = ["--size", "640x360", "--fps", "30", "--vbitrate", "436k", "--abitrate", "64k"]  # 500 kbit/s together
VIEWER_COUNTS = (1, 300, 1000)
PLAYER_COUNTS = (1, 300)
WARMUP_S = 2    # after the last viewer connected, before the window
SETTLE_S = 2    # between phases, so departed viewers are gone
NGINX_MODULE = "/usr/lib/nginx/modules/ngx_rtmp_module.so"
TICKS = os.sysconf("SC_CLK_TCK")


def raise_descriptor_limit():
    """In the child: one descriptor per viewer needs more than the usual soft limit of 1024."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, seconds=10, log=None):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    told = open(log).read()[-2000:] if log and os.path.exists(log) else ""
    sys.exit(f"error: nothing listens on 127.0.0.1:{port} after {seconds} s {told}")


def cpu_seconds(pid):
    """utime + stime of a process, from /proc/PID/stat (fields 14 and 15, after the command name)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def bytes_read(pid):
    """What a player wrote to /dev/null so far (wchar; rchar misses recv), or None once it is gone."""
    try:
        with open(f"/proc/{pid}/io") as f:
            return next(int(l.split()[1]) for l in f if l.startswith("wchar:"))
    except (OSError, StopIteration):
        return None


def stop(process, sig, timeout):
    """Signals a process to stop, killing it if it is still there after `timeout` seconds."""
    process.send_signal(sig)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def viewer_phase(loadgen, url, viewers, window, pid, save):
    """One loadgen run against the server `pid`: its JSON, with the server's CPU over the window
    (per 10 s) and RSS at the end of it."""
    cmd = [loadgen, "-n", str(viewers), "-w", str(window), "-W", str(WARMUP_S)] + (["-o", save] if save else []) + [url]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=raise_descriptor_limit)
    cpu0 = t0 = None
    result = {}
    for line in p.stdout:
        line = line.strip()
        if line == "window-start":
            cpu0, t0 = cpu_seconds(pid), time.monotonic()
        elif line == "window-end":
            cpu1, t1 = cpu_seconds(pid), time.monotonic()
            result["rss"] = rss_mib(pid)
        elif line.startswith("{"):
            result.update(json.loads(line))
    err = p.stderr.read()
    if p.wait() != 0 or cpu0 is None or "viewers" not in result:
        sys.exit(f"error: {' '.join(cmd)} exited {p.returncode}:\n{err[-2000:]}")
    result["cpu10"] = (cpu1 - cpu0) * 10 / (t1 - t0)
    return result


def decode_errors(path, fmt):
    r = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-f", fmt, "-i", path, "-f", "null", "-"], capture_output=True, text=True)
    return [l for l in r.stderr.splitlines() if l.strip()]


def video_frames(path):
    """Video packet timestamps of a recording: how many, and how many steps are not one frame."""
    r = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts_time",
                        "-of", "csv=p=0", path], capture_output=True, text=True)
    pts = sorted(float(x) for x in r.stdout.split() if x and x != "N/A")
    gaps = sum(1 for a, b in zip(pts, pts[1:]) if b - a > 1.5 / 30)
    return len(pts), gaps


def livemux_phases(args, tmp, livemux, loadgen, window):
    port = free_port()
    recording = f"{tmp}/serve-rec.flv"
    server = subprocess.Popen([livemux, "serve", "-q", "--listen", f"127.0.0.1:{port}"] + STREAM + ["-o", recording],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              preexec_fn=raise_descriptor_limit)
    rows, decode = [], {}
    try:
        wait_for_port(port)
        time.sleep(2)  # the first keyframe is cached: every viewer starts at once
        for path, fmt in (("/live.flv", "flv"), ("/live.asf", "asf")):
            for n in VIEWER_COUNTS:
                save = f"{tmp}/viewer-{n}{path.replace('/', '-')}" if n == max(VIEWER_COUNTS) else None
                r = viewer_phase(loadgen, f"http://127.0.0.1:{port}{path}", n, window, server.pid, save)
                r["path"] = path
                rows.append(r)
                if save:
                    decode[path] = decode_errors(save, fmt)
                time.sleep(SETTLE_S)
    finally:
        stop(server, signal.SIGINT, 20)
    if server.returncode != 0:
        sys.exit(f"error: livemux serve exited {server.returncode}: {server.stderr.read().decode(errors='replace')[-2000:]}")
    return rows, decode, video_frames(recording)


def nginx_phases(tmp, livemux, window):
    port = free_port()
    prefix = f"{tmp}/nginx"
    os.makedirs(prefix, exist_ok=True)
    with open(f"{prefix}/nginx.conf", "w") as f:
        f.write(f"""load_module {NGINX_MODULE};
daemon off;
master_process off;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 4096; }}
rtmp {{
  access_log off;
  server {{
    listen 127.0.0.1:{port};
    application live {{ live on; }}
  }}
}}
""")
    nginx = subprocess.Popen(["/usr/sbin/nginx", "-p", prefix, "-c", f"{prefix}/nginx.conf", "-e", f"{prefix}/error.log"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             preexec_fn=raise_descriptor_limit)
    url = f"rtmp://127.0.0.1:{port}/live/bench"
    push = None
    rows = []
    try:
        wait_for_port(port, log=f"{prefix}/error.log")
        push = subprocess.Popen([livemux, "record", "-q"] + STREAM + ["-o", url], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(3)
        for n in PLAYER_COUNTS:
            players = [subprocess.Popen(["rtmpdump", "-q", "-v", "-r", url, "-o", "/dev/null"], stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(n)]
            # Every player is playing once it has read more than the handshake.
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and any((bytes_read(p.pid) or 0) < 65536 for p in players if p.poll() is None):
                time.sleep(0.2)
            time.sleep(WARMUP_S)
            before = [bytes_read(p.pid) for p in players]
            cpu0, t0 = cpu_seconds(nginx.pid), time.monotonic()
            time.sleep(window)
            cpu1, t1 = cpu_seconds(nginx.pid), time.monotonic()
            after = [bytes_read(p.pid) for p in players]
            rss = rss_mib(nginx.pid)
            got = sorted(b - a for a, b in zip(before, after) if a is not None and b is not None)
            median = statistics.median(got) if got else 0
            rows.append({"path": "rtmp", "viewers": n, "served": len(got), "refused_503": 0,
                         "failed": n - len(got), "cut": 0, "cpu10": (cpu1 - cpu0) * 10 / (t1 - t0), "rss": rss,
                         "bytes_median": median, "slowest_to_median": got[0] / median if median else 0, "loadgen_cpu_s": None})
            for p in players:
                p.kill()
            for p in players:
                p.wait()
            time.sleep(SETTLE_S)
    finally:
        if push:
            stop(push, signal.SIGINT, 10)
        stop(nginx, signal.SIGQUIT, 10)
    return rows


def serve_case(args, tmp, livemux):
    for tool, where in (("gcc", "gcc"), ("/usr/sbin/nginx", "nginx"), (NGINX_MODULE, "libnginx-mod-rtmp"), ("rtmpdump", "rtmpdump")):
        if not (shutil.which(tool) or os.path.exists(tool)):
            sys.exit(f"error: the serve case needs {where} (run scripts/setup --test as root)")
    loadgen = f"{tmp}/loadgen"
    subprocess.run(["gcc", "-O2", "-o", loadgen, os.path.join(os.path.dirname(os.path.abspath(__file__)), "loadgen.c")], check=True)
    window = 5 if args.quick else 10
    load = open("/proc/loadavg").read().split()[:3]
    ours, decode, (frames, gaps) = livemux_phases(args, tmp, livemux, loadgen, window)
    theirs = nginx_phases(tmp, livemux, window)
    load_after = open("/proc/loadavg").read().split()[:3]

    lines = [f"### 5. Serving viewers (640x360 30 fps, 436k H.264 + 64k AAC = 500 kbit/s; {window} s windows)", "",
             "| server | stream | viewers asked | served | 503 | failed / cut | server CPU s per 10 s | RSS MiB | "
             "KB per viewer in the window, median | slowest / median | loadgen CPU s |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in ours + theirs:
        server = "nginx-rtmp (rtmpdump players)" if r["path"] == "rtmp" else "livemux serve"
        lg = f"{r['loadgen_cpu_s']:.2f}" if r.get("loadgen_cpu_s") is not None else ""
        lines.append(f"| {server} | {r['path']} | {r['viewers']} | {r['served']} | {r['refused_503']} | {r['failed']} / {r['cut']} | "
                     f"{r['cpu10']:.2f} | {r['rss']:.1f} | {r['bytes_median'] / 1000:.0f} | {r['slowest_to_median']:.2f} | {lg} |")
    by = lambda rows, path, n: next(r for r in rows if r["path"] == path and r["viewers"] == n)
    nginx_one, nginx_300 = by(theirs, "rtmp", 1), by(theirs, "rtmp", 300)
    nginx_fanout = nginx_300["cpu10"] - nginx_one["cpu10"]
    per_viewer = lambda one, many: (many["cpu10"] - one["cpu10"]) * 1000 / max(1, many["served"] - one["served"])
    nginx_each = per_viewer(nginx_one, nginx_300)
    lines += ["", f"| stream | fan-out CPU 300 − 1 viewers, s per 10 s (nginx-rtmp: {nginx_fanout:.2f}) | livemux / nginx (target ≤ 1.0) | "
              f"per served viewer, ms per 10 s (nginx-rtmp: {nginx_each:.1f}) | RSS growth 1000 vs 1 viewer MiB (target ≤ 100) | "
              "slowest / median at 1000 (target ≥ 0.80) | served at 1000 | decode errors, one viewer at 1000 |", "|---|---|---|---|---|---|---|---|"]
    for path in ("/live.flv", "/live.asf"):
        one, three, thousand = (by(ours, path, n) for n in VIEWER_COUNTS)
        fanout = three["cpu10"] - one["cpu10"]
        ratio = f"**{fanout / nginx_fanout:.2f}**" if nginx_fanout > 0 else "n/a"
        lines.append(f"| {path} | {fanout:.2f} ({three['served']} served) | {ratio} | {per_viewer(one, three):.1f} | "
                     f"**{thousand['rss'] - one['rss']:.1f}** | **{thousand['slowest_to_median']:.2f}** | "
                     f"{thousand['served']} of {thousand['viewers']} | {len(decode.get(path, []))} |")
    lines += ["", f"The recording beside the server: {frames} video frames, {gaps} gaps in their timestamps. "
              f"Load average before / after: {' '.join(load)} / {' '.join(load_after)} (shared machine). "
              "CPU and RSS are the server process's (`/proc/PID/stat`, `VmRSS` at the end of each window); "
              "the livemux figures include its encoder, which the fan-out difference cancels, nginx's do not include the pushing livemux."]
    for path, errors in decode.items():
        if errors:
            lines.append(f"First decode errors of {path}: `{' / '.join(errors[:3])}`.")
    return lines


BROWSER_VIEWERS = 100


def browser_case(args, tmp, livemux):
    """Case 11: what a browser viewer costs against an HTTP-FLV one. One `livemux serve`, then
    100 loadgen viewers of /live.mp4 (fragmented MP4 for Media Source Extensions) and 100 of
    /live.flv in alternating windows of the same run, and a window with none; the server's CPU
    in each. The MP4 muxer runs whether anyone watches or not, so the idle window is the floor."""
    if not shutil.which("gcc"):
        sys.exit("error: the browser case needs gcc (run scripts/setup --test as root)")
    loadgen = f"{tmp}/loadgen"
    subprocess.run(["gcc", "-O2", "-o", loadgen, os.path.join(os.path.dirname(os.path.abspath(__file__)), "loadgen.c")], check=True)
    window = 5 if args.quick else 10
    load = open("/proc/loadavg").read().split()[:3]
    port = free_port()
    server = subprocess.Popen([livemux, "serve", "-q", "--listen", f"127.0.0.1:{port}"] + STREAM,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              preexec_fn=raise_descriptor_limit)
    pairs, idle, decode = [], [], {}
    try:
        wait_for_port(port)
        time.sleep(2)  # the first keyframe is cached: every viewer starts at once
        for i in range(args.pairs):
            order = ("/live.flv", "/live.mp4") if i % 2 == 0 else ("/live.mp4", "/live.flv")
            pair = {}
            for path in order:
                last = i == args.pairs - 1
                save = f"{tmp}/browser-viewer{path.replace('/', '-')}" if last else None
                pair[path] = viewer_phase(loadgen, f"http://127.0.0.1:{port}{path}", BROWSER_VIEWERS, window, server.pid, save)
                if save:
                    decode[path] = decode_errors(save, "flv" if path.endswith(".flv") else "mov")
                time.sleep(SETTLE_S)
            pairs.append(pair)
            cpu0, t0 = cpu_seconds(server.pid), time.monotonic()
            time.sleep(window)
            idle.append((cpu_seconds(server.pid) - cpu0) * 10 / (time.monotonic() - t0))
    finally:
        stop(server, signal.SIGINT, 20)
    load_after = open("/proc/loadavg").read().split()[:3]
    floor = statistics.median(idle)
    ratios = [p["/live.mp4"]["cpu10"] / p["/live.flv"]["cpu10"] for p in pairs]
    fanout = [(p["/live.mp4"]["cpu10"] - floor) / max(1e-9, p["/live.flv"]["cpu10"] - floor) for p in pairs]
    lines = [f"### 11. Browser viewers against HTTP-FLV viewers ({BROWSER_VIEWERS} each, 640x360 30 fps 500 kbit/s;"
             f" {window} s windows, {args.pairs} alternating pairs, one livemux serve)", "",
             "| pair | /live.flv CPU s per 10 s | /live.mp4 CPU s per 10 s | no viewers | mp4 / flv | served flv / mp4 | KB per viewer flv / mp4, median |",
             "|---|---|---|---|---|---|---|"]
    for i, (p, r, n) in enumerate(zip(pairs, ratios, idle), 1):
        flv, mp4 = p["/live.flv"], p["/live.mp4"]
        lines.append(f"| {i} | {flv['cpu10']:.2f} | {mp4['cpu10']:.2f} | {n:.2f} | {r:.2f} | {flv['served']} / {mp4['served']} | "
                     f"{flv['bytes_median'] / 1000:.0f} / {mp4['bytes_median'] / 1000:.0f} |")
    lines += ["", f"100 browser viewers cost **{statistics.median(ratios):.2f}×** ({min(ratios):.2f}–{max(ratios):.2f}) the server CPU of"
              f" 100 HTTP-FLV viewers (target ≤ 1.2); above the no-viewer floor ({floor:.2f} s per 10 s, which includes the"
              f" MP4 muxer and HLS cutting that run whether anyone watches), {statistics.median(fanout):.2f}×"
              f" ({min(fanout):.2f}–{max(fanout):.2f}). Decode errors of one viewer's body in the last pair:"
              f" flv {len(decode.get('/live.flv', []))}, mp4 {len(decode.get('/live.mp4', []))}."
              f" Load average before / after: {' '.join(load)} / {' '.join(load_after)} (shared machine)."]
    if server.returncode != 0:
        lines.append(f"livemux serve exited {server.returncode}.")
    return lines
