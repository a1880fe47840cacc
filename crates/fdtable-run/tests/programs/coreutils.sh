# coreutils pipelines.
seq 1 30000 > big.txt
sort -rn big.txt | head -3
printf 'b\na\nb\nc\n' | sort | uniq -c | sort -rn
split -l 7000 big.txt part.
ls part.* | xargs -n 1 wc -l | sort
cat part.* | gzip -c > all.gz && gzip -dc all.gz | wc -l
tee a.txt b.txt < big.txt | tail -1
cmp a.txt b.txt && echo same
find . -name 'part.*' | sort | xargs cat | md5sum
awk '{s += $1} END {print s}' big.txt
sed -n '5,7p' big.txt | tr '\n' ' '; echo
cut -c1-2 big.txt | sort -u | wc -l
sort -S 1M --parallel=2 -R --random-source=big.txt big.txt | sort -n | tail -1
timeout 5 tail -n 2 big.txt
echo "x" | tee /dev/stderr | cat
dd if=big.txt of=copy.txt bs=4k 2>/dev/null && cmp big.txt copy.txt && echo dd ok
ls -l /proc/self/fd/ | awk 'NR > 1 {print $9}' | sort -n
stat -c '%F' /dev/fd/0 /dev/stdin
readlink /proc/self/fd/0
mkdir -p src && cp big.txt src/a && cp a.txt src/b
tar czf a.tgz src && mkdir x && tar xzf a.tgz -C x && tar tzf a.tgz | sort
find /usr/include/linux -name '*.h' | sort | head -300 | xargs -n 50 -P 2 grep -l 'struct' | sort | md5sum
if command -v ssh-keygen > /dev/null; then ssh-keygen -q -t ed25519 -N '' -f key && ssh-keygen -l -f key.pub | wc -w; fi
