# subprocess: pipes, pass_fds, close_fds (close_range in the child), preexec_fn (fork),
# a failing exec, os.dup2(inheritable=False) (dup3 O_CLOEXEC), os.closerange.
import os, subprocess, sys
print(subprocess.run(["echo", "sub"], capture_output=True).stdout)
p = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
print(p.communicate(b"through cat")[0])
r, w = os.pipe()
print(subprocess.run(["sh", "-c", f"echo passfd >&{w}"], pass_fds=[w]).returncode)
os.close(w); print(os.read(r, 100)); os.close(r)
print(subprocess.run(["sh", "-c", "ls /proc/self/fd | wc -l"], capture_output=True, close_fds=False).stdout)
print(subprocess.run(["sh", "-c", "ls /dev/fd | wc -l"], capture_output=True, preexec_fn=lambda: None).stdout)
try:
    subprocess.run(["/nonexistent/prog"])
except FileNotFoundError as e:
    print("exec failed", e.errno)
fd = os.open("/etc/hostname", os.O_RDONLY)
print("dup2", os.dup2(fd, 20, inheritable=False), os.get_inheritable(20))
os.closerange(3, 30)
print("fstat after closerange", end=" ")
try:
    os.fstat(fd)
except OSError as e:
    print(e.errno)
print(subprocess.run("exit 3", shell=True).returncode)
print(subprocess.check_output(["sh", "-c", "echo err >&2; echo out"], stderr=subprocess.STDOUT))
