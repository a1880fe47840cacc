# Perl open modes: files, pipes both ways, backticks, system, pipe, dup of STDOUT, STDERR reopened.
open(my $in, "<", "in.txt") or die; my @l = <$in>; close($in);
open(my $out, ">", "out.txt") or die; print $out sort @l; close($out);
open(my $p, "-|", "sort", "-r", "in.txt") or die; my @r = <$p>; close($p); print "sorted: ", join("", @r);
open(my $q, "|-", "wc -l > count.txt") or die; print $q @r; close($q);
open(my $c, "<", "count.txt") or die; print "count: ", <$c>; close($c);
my $x = `ls /nonexistent 2>&1`; print "backticks: ", ($x =~ /No such file/ ? "ok" : $x), "\n";
system("true") == 0 or die; print "system ok\n";
pipe(my $rd, my $wr) or die; print $wr "through pipe\n"; close($wr); print scalar <$rd>;
open(my $dup, ">&", \*STDOUT) or die; print $dup "dup of stdout\n"; close($dup);
print "fileno: ", fileno($rd), "\n";
open(my $bad, "<", "/nonexistent") or print "fail ok\n";
if (my $pid = fork) { waitpid($pid, 0); print "child exit ", $? >> 8, "\n" } else { exit 3 }
open(STDERR, ">", "err.txt") or die; print STDERR "moved\n"; close(STDERR);
open(my $e, "<", "err.txt") or die; print "stderr file: ", <$e>;
