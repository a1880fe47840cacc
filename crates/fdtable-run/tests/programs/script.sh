# bash: redirections, process substitution, coprocs, here-documents, descriptor games.
set -u
echo start
cat <(echo procsub)
diff <(printf 'a\nb\n') <(printf 'a\nc\n')
echo "diff status $?"
paste <(seq 3) <(seq 4 6) <(seq 7 9)
exec 3>out3.txt; echo to3 >&3; exec 3>&-; cat out3.txt
exec {fd}>outfd.txt; echo "fd=$fd" >&$fd; exec {fd}>&-; cat outfd.txt
exec 5>&1; echo "via 5" >&5; exec 1>out1.txt; echo "to file"; exec 1>&5 5>&-; cat out1.txt
coproc CP { while read -r x; do echo "got $x"; done; }
echo ping >&"${CP[1]}"; read -r line <&"${CP[0]}"; echo "$line"
echo pong >&"${CP[1]}"; read -r line <&"${CP[0]}"; echo "$line"
exec {CP[1]}>&-; wait "$CP_PID"; echo "coproc done $?"
echo here | (read -r a; echo "subshell $a")
cat <<< "herestring"
cat <<EOT
heredoc $((6 * 7))
EOT
x=$(echo cmdsub); echo "$x"
ls /dev/fd/ | wc -l
ls /proc/self/fd | wc -l
{ echo to-stderr >&2; } 2>&1 | tr a-z A-Z
echo missing > /nonexistent/dir/file 2>/dev/null || echo "redirect failed $?"
cat < /dev/stdin <<< "dev stdin"
cat /dev/fd/0 <<< "dev fd 0"
while read -r l; do echo "line $l"; done < <(printf '1\n2\n')
mapfile -t arr < <(seq 5); echo "${#arr[@]} ${arr[4]}"
( exec 7<out3.txt; read -r l <&7; echo "fd7 $l"; ls /proc/self/fd | grep -c '^7$' )
source <(echo 'echo sourced')
wc -l < <(seq 100)
ulimit -n 64; ulimit -n
( ulimit -n 9; exec 8>/dev/null; echo "fd 8 under limit 9: ok"; exec 9>/dev/null ) 2>&1 | sed 's/.*: //'
echo done
