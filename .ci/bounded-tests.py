#!/usr/bin/env python3
"""Runs a `swift test` command for CI: its whole output goes to a log, and CI's own output keeps
what a reader needs (skipped tests, failures with their messages, the closing line).

A run that outlives its limit, or whose process has not exited 120 s after its closing line, is a
hang, which CI would otherwise only see as its own time-out, with no word of where: the stacks of
the test processes' threads (gdb), the processes under the run and the tests that started and never
ended are printed, and the run is killed.

    bounded-tests.py LOG LIMIT_SECONDS -- swift test ...
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

# How long a test process may take to exit once its run has closed (its atexit handlers flush).
EXIT_LIMIT = 120
# At most this many lines of a run are printed (CI keeps only so much); the log has them all.
SHOWN_LIMIT = 300

STATUS = ("◇", "✔", "✘", "➜", "↳")  # the symbols Swift Testing's lines begin with
STARTED = re.compile(r"^◇ Test (?!case passing )(.+) started\.$")
ENDED = re.compile(r"^[✔✘] Test (.+?)(?: with \d+ test cases?)? (?:passed|failed) after ")


class Progress:
    """What the run said so far: the lines CI shows, and which tests are still running."""

    def __init__(self):
        self.running = {}
        self.in_issue = False
        self.closed_at = None  # when the run's closing line came
        self.lock = threading.Lock()

    def take(self, line):
        """Notes `line`; returns whether CI shows it."""
        with self.lock:
            started, ended = STARTED.match(line), ENDED.match(line)
            if started and line != "◇ Test run started.":
                self.running[started.group(1)] = self.running.get(started.group(1), 0) + 1
            elif ended and ended.group(1) in self.running:
                # Tests of several suites may share a name: each end takes one.
                self.running[ended.group(1)] -= 1
                if self.running[ended.group(1)] == 0:
                    del self.running[ended.group(1)]
            if line.startswith("↳"):
                return self.in_issue  # an issue's details
            if line.startswith(STATUS):
                if "Test run with" in line:
                    self.closed_at = time.monotonic()
                self.in_issue = line.startswith("✘")
                return line.startswith(("✘", "➜")) or "Test run with" in line
            # An issue's message goes on over the lines that follow it.
            return self.in_issue or "error:" in line or "crashed" in line

    def unfinished(self):
        with self.lock:
            return sorted(self.running)


def descendants(root):
    """The processes under `root`, from /proc."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as stat:
                    parent = int(stat.read().rsplit(")", 1)[1].split()[1])
                children.setdefault(parent, []).append(int(entry))
            except (OSError, IndexError, ValueError):
                pass
    found, queue = [], [root]
    while queue:
        for child in children.get(queue.pop(), []):
            found.append(child)
            queue.append(child)
    return found


def command_line(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as file:
            return file.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


def threads(pid, log_path):
    """The stacks of `pid`'s threads from gdb, whole in a file beside the log; printed short: each
    thread's frames in this project's code, and how many threads have none."""
    gdb, swift = shutil.which("gdb"), shutil.which("swift")
    if not gdb:
        return ["(no gdb here to read its threads)"]
    dump = subprocess.run([gdb, "-p", str(pid), "-batch", "-ex", "thread apply all bt 60"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300).stdout
    if swift:
        dump = subprocess.run([swift, "demangle", "--simplified"], input=dump, stdout=subprocess.PIPE,
                              timeout=300).stdout
    text = dump.decode(errors="replace")
    with open("%s.threads-%d" % (log_path, pid), "w") as file:
        file.write(text)
    stacks, idle = {}, {}
    for thread in re.split(r"\n(?=Thread \d+ )", text):
        header, *frames = [line for line in thread.splitlines() if line.startswith(("Thread ", "#"))] or [""]
        if not header.startswith("Thread "):
            continue
        frames = [re.sub(r"^#\d+\s+(0x\w+ in )?", "", frame) for frame in frames]
        ours = tuple(frame[-200:] for frame in frames if re.search(r" at /\S*/(Sources|Tests)/", frame))
        if ours:
            stacks.setdefault(ours[:6], []).append(header.split(" (")[0])
        else:
            top = frames[0].split(" (")[0][:80] if frames else "?"
            idle[top] = idle.get(top, 0) + 1
    lines = []
    for frames, names in stacks.items():
        lines.append(", ".join(names) if len(names) < 4 else "%d threads" % len(names))
        lines += ["    " + frame for frame in frames]
    for top, count in sorted(idle.items(), key=lambda item: -item[1]):
        lines.append("%d thread(s) with no frame of ours, in %s" % (count, top))
    return lines


def report_hang(process, progress, what, log_path):
    under = descendants(process.pid)
    for pid in under:
        if "PackageTests" in command_line(pid):
            print("The threads of the test process %d (whole in %s.threads-%d):" % (pid, log_path, pid))
            for line in threads(pid, log_path):
                print("  " + line)
    print("The processes under it:")
    for pid in under:
        print("  %d %s" % (pid, command_line(pid)[:200]))
    print("The tests that started and have not ended:")
    for name in progress.unfinished() or ["(none: every test that started has ended)"]:
        print("  " + name)
    print("error: %s" % what)
    sys.stdout.flush()


def main():
    log_path, limit, command = sys.argv[1], int(sys.argv[2]), sys.argv[4:]
    assert sys.argv[3] == "--", __doc__
    progress = Progress()
    print("%s (its whole output: %s)" % (" ".join(command), log_path), flush=True)
    # A session of its own, so that a hang is ended with every process under it.
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, start_new_session=True)

    def copy():
        shown = 0
        with open(log_path, "w") as log:
            for raw in process.stdout:
                # Without the colours Swift Testing gives a terminal-like TERM.
                line = re.sub(r"\x1b\[[0-9;]*m", "", raw.decode(errors="replace").rstrip("\n"))
                log.write(line + "\n")
                log.flush()
                if not progress.take(line):
                    continue
                # The closing line is always shown: CI reads it.
                if shown < SHOWN_LIMIT or "Test run with" in line:
                    print(line, flush=True)
                elif shown == SHOWN_LIMIT:
                    print("(more in %s)" % log_path, flush=True)
                shown += 1

    reader = threading.Thread(target=copy, daemon=True)
    reader.start()
    deadline = time.monotonic() + limit
    while True:
        try:
            status = process.wait(timeout=5)
            break
        except subprocess.TimeoutExpired:
            now = time.monotonic()
            if progress.closed_at is not None and now > progress.closed_at + EXIT_LIMIT:
                hang = "the run closed %d s ago, and its process has not exited: a hang at exit" % EXIT_LIMIT
            elif now > deadline:
                hang = "still running after %d s: a hang" % limit
            else:
                continue
            report_hang(process, progress, hang, log_path)
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            print("error: killed; the whole output is in %s" % log_path)
            return 1
    # A child left running with the output open would keep the reader waiting: end them too.
    reader.join(timeout=30)
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    if status != 0:
        print("error: exited with status %d; the whole output is in %s" % (status, log_path))
    return status


if __name__ == "__main__":
    sys.exit(main())
