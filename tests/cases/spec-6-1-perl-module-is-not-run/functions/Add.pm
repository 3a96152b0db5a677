Proto (NUMBER, NUMBER);
sub Eval ($$) {
  my ($args, $ctx) = @_;
  return OK($args->[0]+$args->[1]);
}
