# /dev/stdin, /dev/stdout, /dev/stderr are symbolic links to /proc/self/fd/0..2: reading
# the link gives its text, following it reaches the program's own descriptor.
readlink /dev/stdin /dev/stdout /dev/stderr
ls -l /dev/stdin | sed 's/.* \/dev\/stdin/\/dev\/stdin/'
[ -L /dev/stdin ] && echo "stdin is a link"
readlink -f /dev/fd | sed 's/[0-9][0-9]*/PID/'
stat -L -c '%s' /dev/stdin
cat /dev/stdin
echo to stdout > /dev/stdout
echo to stderr > /dev/stderr
python3 -c 'import os; print(os.readlink("/dev/stdin"), os.path.islink("/dev/stderr"), os.stat("/dev/stdin").st_size)' < in.txt
exec 5< in.txt
readlink /dev/fd/5 | sed 's/.*\///'
cat /dev/fd/5
