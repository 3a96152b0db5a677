use strict; use warnings; no warnings;
$| = 1;
while (my $line = <STDIN>) {
    chomp $line;
    my ($ph, $sh) = split / /, $line, -1;
    my $p = pack('H*', $ph); my $s = pack('H*', $sh // '');
    my $re = eval { qr/$p/ };
    if (!defined $re) { print "ERR\n"; next; }
    my @res;
    my $ok = eval {
        local $SIG{ALRM} = sub { die "timeout\n" };
        alarm 2;
        if ($s =~ $re) {
            my @c = ($&);
            for my $i (1..$#+) { push @c, defined($-[$i]) ? substr($s, $-[$i], $+[$i]-$-[$i]) : undef; }
            @res = ('M', map { defined($_) ? unpack('H*', $_) . 'h' : 'U' } @c);
        } else { @res = ('N'); }
        alarm 0; 1;
    };
    if (!$ok) { print "TIMEOUT\n"; next; }
    print join(' ', @res), "\n";
}
