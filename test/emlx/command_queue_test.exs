defmodule EMLX.CommandQueueTest do
  # EMLX.CommandQueue, the process binding and EMLX.resolve_worker/1.
  # async: false: some tests change the :emlx application environment.
  use ExUnit.Case, async: false

  import ExUnit.CaptureLog
  import EMLX.TestHelpers

  alias EMLX.CommandQueue

  doctest EMLX.CommandQueue

  describe "new/1 and new!/1" do
    test "a cpu queue" do
      assert {:ok, %CommandQueue{ref: ref, device: :cpu}} = CommandQueue.new(:cpu)
      assert is_reference(ref)
      assert %CommandQueue{device: :cpu} = CommandQueue.new!({:cpu, 0})
    end

    test "two queues are distinct" do
      {:ok, a} = CommandQueue.new(:cpu)
      {:ok, b} = CommandQueue.new(:cpu)
      assert a.ref != b.ref
    end

    test "unknown and unavailable devices" do
      assert {:error, "command_queue_new: argument 1: expected a device" <> _} =
               CommandQueue.new(:tpu)

      assert {:error, "command_queue_new: " <> message} = CommandQueue.new(:gpu)
      assert message =~ "gpu"
      assert_raise EMLX.NIFError, ~r/command_queue_new/, fn -> CommandQueue.new!(:gpu) end
    end

    test "queues are freed when garbage collected" do
      %{queues: before} = settled_counters()

      result =
        run_and_exit(fn ->
          for _ <- 1..50 do
            q = CommandQueue.new!(:cpu)
            CommandQueue.with_queue(q, fn -> EMLX.eval(tensor([1.0], {1})) end)
          end
        end)

      assert result == List.duplicate(:ok, 50)
      assert %{queues: ^before} = settled_counters()
    end
  end

  describe "synchronize/1" do
    test "returns once earlier work is done" do
      q = CommandQueue.new!(:cpu)
      t = EMLX.exp(EMLX.full(1.0, {512, 512}, {:f, 32}, :cpu))
      ref = make_ref()
      assert EMLX.NIF.eval(t, q.ref, ref) == :ok
      assert CommandQueue.synchronize(q) == :ok
      # the eval's reply arrived before the barrier's
      assert_received {^ref, {:ok, :ok}}
    end

    test "on an idle queue" do
      assert CommandQueue.synchronize(CommandQueue.new!(:cpu)) == :ok
    end
  end

  describe "with_queue/2" do
    test "binds the queue for the call and restores the previous binding" do
      q1 = CommandQueue.new!(:cpu)
      q2 = CommandQueue.new!(:cpu)
      assert Process.get(:emlx_command_queue) == nil

      result =
        CommandQueue.with_queue(q1, fn ->
          assert Process.get(:emlx_command_queue) == {q1.ref, :cpu}
          assert EMLX.resolve_worker(:cpu) == {q1.ref, :cpu}

          CommandQueue.with_queue(q2, fn ->
            assert EMLX.resolve_worker(:cpu) == {q2.ref, :cpu}
          end)

          assert EMLX.resolve_worker(:cpu) == {q1.ref, :cpu}
          :result
        end)

      assert result == :result
      assert Process.get(:emlx_command_queue) == nil
    end

    test "restores the binding when the function raises" do
      q = CommandQueue.new!(:cpu)
      assert_raise RuntimeError, fn -> CommandQueue.with_queue(q, fn -> raise "boom" end) end
      assert Process.get(:emlx_command_queue) == nil
    end

    test "evaluations inside run on the bound queue and give correct results" do
      q = CommandQueue.new!(:cpu)

      CommandQueue.with_queue(q, fn ->
        a = tensor([1.0, 2.0, 3.0], {3})
        assert values(EMLX.multiply(a, a)) == [1.0, 4.0, 9.0]
        assert EMLX.item(EMLX.sum(a, nil, false)) == 6.0
        assert EMLX.eval(a) == :ok
      end)
    end
  end

  describe "resolve_worker/1" do
    test "without a binding: the application's default queue for the device" do
      assert {ref, :cpu} = EMLX.resolve_worker(:cpu)
      assert ref == EMLX.Application.default_worker(:cpu)
      assert is_reference(ref)
      assert EMLX.resolve_worker(:gpu) == {nil, :gpu}
    end

    test "a binding on another device falls back to that device's default queue" do
      fake = %CommandQueue{ref: make_ref(), device: :gpu}

      CommandQueue.with_queue(fake, fn ->
        assert EMLX.resolve_worker(:cpu) == {EMLX.Application.default_worker(:cpu), :cpu}
        assert EMLX.resolve_worker(:gpu) == {fake.ref, :gpu}
      end)
    end

    test "cross_device_promotion routes to the bound queue, warning when asked" do
      fake = %CommandQueue{ref: make_ref(), device: :gpu}
      Application.put_env(:emlx, :cross_device_promotion, true)
      Application.put_env(:emlx, :warn_cross_device, true)

      try do
        log =
          capture_log(fn ->
            CommandQueue.with_queue(fake, fn ->
              assert EMLX.resolve_worker(:cpu) == {fake.ref, :gpu}
            end)
          end)

        assert log =~ "cross-device promotion: cpu tensor routed to gpu queue"
      after
        Application.delete_env(:emlx, :cross_device_promotion)
        Application.delete_env(:emlx, :warn_cross_device)
      end
    end
  end

  test "work for a device without a queue is a clear error" do
    {_, ref} = tensor([1.0], {1})

    assert_raise EMLX.NIFError, ~r/^eval: device gpu has no command queue/, fn ->
      EMLX.eval({:gpu, ref})
    end
  end

  test "EMLX.Application started the cpu default queue" do
    assert is_reference(EMLX.Application.default_worker(:cpu))
    assert EMLX.Application.default_worker(:gpu) == nil
    assert EMLX.Application.default_worker(:tpu) == nil
  end
end
