# Used by "mix format"
locals_without_parens = [deftensor: 2, defdevice: 2, defvalue: 2, defeval: 2]

[
  inputs: ["{mix,.formatter}.exs", "{config,lib,test}/**/*.{ex,exs}", "bench/nif_*.exs"],
  locals_without_parens: locals_without_parens,
  export: [locals_without_parens: locals_without_parens]
]
