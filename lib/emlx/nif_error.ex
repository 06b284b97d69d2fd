defmodule EMLX.NIFError do
  @moduledoc """
  Raised when the native engine rejects a call: an argument of the wrong
  type, shape or range, a deallocated tensor, an unavailable device, or a
  failure while computing. The message starts with the name of the native
  function and says what was wrong, e.g.
  `"add: argument 2: expected a tensor {device, reference}, got: 1"`.
  """
  defexception [:message]
end
