if Code.ensure_loaded?(Nx) do
  defmodule EMLX.Backend.Reduce do
    @moduledoc false
    # Nx.reduce/4 and Nx.window_reduce/5 with a user function.
    #
    # The function is traced once with Nx.Defn.Expr on scalar parameters. When
    # every node of the trace is a scalar element-wise operation, the trace is
    # also valid on whole tensors, element by element, so the reduction runs
    # on the engine as a tree: the reduced elements are laid out on a last
    # axis and combined pairwise, `fun.(later, earlier)`, halving the axis
    # each step (log2(n) vectorized steps). That is Nx's left fold
    # `fun.(x_n, ... fun.(x_2, fun.(x_1, acc)))` regrouped, which Nx's
    # contract (an associative function) allows. The trace is what runs on
    # the whole tensors (each node as the Nx function of its op), not `fun`
    # itself: a function given by a defn (a `:fun` node that an evaluator or
    # the compiler evaluates) computes its nodes with the scalar shapes of the
    # trace. Otherwise the reduction is run as Nx.BinaryBackend's scalar loop
    # on a copy, with Nx.BinaryBackend as the default backend (a defn's
    # function makes its constants there), and the result copied back.

    alias Nx.Tensor, as: T

    unary =
      Enum.map(Nx.Shared.unary_math_funs(), &elem(&1, 0)) ++
        [:abs, :bitwise_not, :ceil, :conjugate, :floor, :negate, :round, :sign] ++
        [:count_leading_zeros, :population_count, :real, :imag, :is_nan, :is_infinity]

    binary =
      [:add, :subtract, :multiply, :pow, :remainder, :divide, :atan2, :min, :max, :quotient] ++
        [:bitwise_and, :bitwise_or, :bitwise_xor, :left_shift, :right_shift] ++
        [:equal, :not_equal, :greater, :less, :greater_equal, :less_equal] ++
        [:logical_and, :logical_or, :logical_xor]

    @elementwise MapSet.new(unary ++ binary ++ [:select, :as_type, :clip, :metadata])
    @leaves MapSet.new([:parameter, :constant, :tensor])

    @doc false
    def reduce(%T{} = out, %T{} = t, %T{} = acc, opts, fun) do
      if traced = elementwise(fun, out.type) do
        axes = opts[:axes] || Nx.axes(t)
        kept = Nx.axes(t) -- axes
        t = Nx.as_type(t, out.type)
        kept_dims = Enum.map(kept, &elem(t.shape, &1))
        n = Enum.reduce(axes, 1, &(elem(t.shape, &1) * &2))

        t
        |> Nx.transpose(axes: kept ++ axes)
        |> Nx.reshape(List.to_tuple(kept_dims ++ [n]))
        |> combine(engine_acc(acc, out.type), traced, out.type)
        |> into(out)
      else
        fallback(out, fn ->
          Nx.reduce(binary_copy(t), binary_copy(acc), Keyword.put(opts, :type, out.type), fun)
        end)
      end
    end

    @doc false
    def window_reduce(%T{} = out, %T{} = t, %T{} = acc, window_dims, opts, fun) do
      if traced = elementwise(fun, out.type) do
        acc = engine_acc(acc, out.type)
        t = Nx.as_type(t, out.type)
        padding = Enum.map(opts[:padding], fn {lo, hi} -> {lo, hi, 0} end)
        padded = Nx.pad(t, acc, padding)
        strides = opts[:strides]
        dilations = opts[:window_dilations]
        out_dims = Tuple.to_list(out.shape)
        lengths = for {o, s} <- Enum.zip(out_dims, strides), do: (o - 1) * s + 1

        windows =
          for offset <- offsets(Tuple.to_list(window_dims)) do
            starts = for {o, d} <- Enum.zip(offset, dilations), do: o * d

            if Enum.any?(out_dims, &(&1 == 0)) do
              Nx.broadcast(acc, out.shape)
            else
              Nx.slice(padded, starts, lengths, strides: strides)
            end
          end

        windows
        |> Nx.stack(axis: -1)
        |> combine(acc, traced, out.type)
        |> into(out)
      else
        fallback(out, fn ->
          window_opts = [padding: opts[:padding], strides: opts[:strides]]
          window_opts = Keyword.put(window_opts, :window_dilations, opts[:window_dilations])
          Nx.window_reduce(binary_copy(t), binary_copy(acc), window_dims, window_opts, fun)
        end)
      end
    end

    # Every offset tuple inside a window, in row-major order.
    defp offsets([]), do: [[]]

    defp offsets([dim | dims]),
      do: for(i <- 0..(dim - 1)//1, rest <- offsets(dims), do: [i | rest])

    # Folds the last axis of `t` into `acc` with `fun`, as a tree.
    defp combine(%T{shape: shape} = t, acc, fun, type) do
      rank = tuple_size(shape)

      case elem(shape, rank - 1) do
        0 ->
          Nx.broadcast(acc, Tuple.delete_at(shape, rank - 1))

        _ ->
          t
          |> tree(fun, type)
          |> then(&Nx.as_type(run(fun, [&1, acc]), type))
      end
    end

    defp tree(%T{shape: shape} = t, fun, type) do
      rank = tuple_size(shape)
      last = rank - 1
      n = elem(shape, last)

      if n == 1 do
        Nx.squeeze(t, axes: [last])
      else
        # An odd element out stays in front, so the order is kept.
        {head, rest} =
          if rem(n, 2) == 1 do
            {Nx.slice_along_axis(t, 0, 1, axis: last),
             Nx.slice_along_axis(t, 1, n - 1, axis: last)}
          else
            {nil, t}
          end

        m = div(n - if(head, do: 1, else: 0), 2)
        pairs = Nx.reshape(rest, shape |> put_elem(last, m) |> Tuple.insert_at(rank, 2))
        earlier = pairs |> Nx.slice_along_axis(0, 1, axis: rank) |> Nx.squeeze(axes: [rank])
        later = pairs |> Nx.slice_along_axis(1, 1, axis: rank) |> Nx.squeeze(axes: [rank])

        step =
          Nx.as_type(run(fun, [later, earlier]), type) |> Nx.broadcast(put_elem(shape, last, m))

        next = if head, do: Nx.concatenate([head, step], axis: last), else: step
        tree(next, fun, type)
      end
    end

    defp engine_acc(%T{data: %EMLX.Backend{}} = acc, type), do: Nx.as_type(acc, type)
    defp engine_acc(acc, type), do: acc |> Nx.backend_copy(EMLX.Backend) |> Nx.as_type(type)

    defp binary_copy(t), do: Nx.backend_copy(t, Nx.BinaryBackend)

    defp fallback(out, fun) do
      previous = Nx.default_backend(Nx.BinaryBackend)

      try do
        fun.()
      after
        Nx.default_backend(previous)
      end
      |> Nx.backend_transfer(EMLX.Backend)
      |> into(out)
    end

    # The result as `out` (its shape, type and names).
    defp into(%T{} = result, out) do
      result |> EMLX.Backend.from_nx() |> EMLX.reshape(out.shape) |> EMLX.Backend.to_nx(out)
    end

    ## Tracing

    @doc false
    # Whether `fun`, traced on two scalars of `type`, is made of scalar
    # element-wise operations only.
    def elementwise?(fun, type), do: elementwise(fun, type) != nil

    @doc false
    # `fun` traced on two scalars of `type` when the trace is made of scalar
    # element-wise operations only, or nil.
    def elementwise(fun, type) do
      param = Nx.template({}, type)
      expr = Nx.Defn.debug_expr(fun).(param, param)
      if match?(%T{shape: {}}, expr) and walk([expr], MapSet.new()), do: expr
    rescue
      _ -> nil
    end

    # The trace evaluated on whole tensors (`args` are its parameters): each
    # node is the Nx function of its op, with the node's type.
    defp run(expr, args) do
      {result, _memo} = node(expr, args, %{})
      result
    end

    defp node(%T{data: %Nx.Defn.Expr{id: id}} = t, args, memo) do
      case memo do
        %{^id => value} ->
          {value, memo}

        %{} ->
          {value, memo} = compute(t, args, memo)
          {value, Map.put(memo, id, value)}
      end
    end

    defp compute(%T{type: type, data: %Nx.Defn.Expr{op: op, args: node_args}}, args, memo) do
      case op do
        :parameter ->
          {args |> Enum.fetch!(hd(node_args)) |> Nx.as_type(type), memo}

        :constant ->
          {Nx.tensor(hd(node_args), type: type, backend: EMLX.Backend), memo}

        :tensor ->
          {Nx.backend_copy(hd(node_args), EMLX.Backend), memo}

        :metadata ->
          node(hd(node_args), args, memo)

        _ ->
          {inputs, memo} =
            node_args
            |> Enum.filter(&match?(%T{}, &1))
            |> Enum.map_reduce(memo, &node(&1, args, &2))

          value =
            case op do
              :as_type -> Nx.as_type(hd(inputs), type)
              op -> apply(Nx, op, inputs)
            end

          {Nx.as_type(value, type), memo}
      end
    end

    defp walk([], _seen), do: true

    defp walk([%T{shape: {}, data: %Nx.Defn.Expr{id: id, op: op, args: args}} | rest], seen) do
      cond do
        MapSet.member?(seen, id) ->
          walk(rest, seen)

        MapSet.member?(@leaves, op) ->
          walk(rest, MapSet.put(seen, id))

        MapSet.member?(@elementwise, op) ->
          walk(Enum.filter(args, &match?(%T{}, &1)) ++ rest, MapSet.put(seen, id))

        true ->
          false
      end
    end

    defp walk([_other | _], _seen), do: false
  end
end
