use utf8;
+{
  'Name' => 'web',
  'Quoted' => 'with space',
  'Str' => 'a "q" $ @x',
  'Num' => 42,
  'Dec' => -1.5,
  'Yes' => !!1,
  'Text' => 'yes',
  'Re' => 'a/b$',
  'L' => [
    1,
    'two',
    [3],
  ],
  'B' => {
    'Inner' => {
      'X' => 1,
    },
    'Empty' => {},
  },
  'EmptyList' => [],
  'Uni' => 'café ✓',
  'Multi' => "a\nb",
};
