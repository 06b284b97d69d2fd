defmodule EMLX.DefaultDeviceTest do
  # async: false: changes the :emlx application environment.
  use ExUnit.Case, async: false

  setup do
    previous = Application.fetch_env(:emlx, :default_device)

    on_exit(fn ->
      case previous do
        {:ok, value} -> Application.put_env(:emlx, :default_device, value)
        :error -> Application.delete_env(:emlx, :default_device)
      end
    end)
  end

  test "unset: :gpu when available, else :cpu" do
    Application.delete_env(:emlx, :default_device)
    {:ok, gpu?} = EMLX.NIF.device_available(:gpu)
    assert EMLX.default_device() == if(gpu?, do: :gpu, else: :cpu)
    assert {:ok, engine_default} = EMLX.NIF.engine_default_device()
    assert EMLX.default_device() == engine_default
  end

  test "configured :cpu, or {:cpu, index}" do
    Application.put_env(:emlx, :default_device, :cpu)
    assert EMLX.default_device() == :cpu
    Application.put_env(:emlx, :default_device, {:cpu, 0})
    assert EMLX.default_device() == :cpu
  end

  test "configured :gpu without a GPU backend is a clear error" do
    {:ok, gpu?} = EMLX.NIF.device_available(:gpu)
    Application.put_env(:emlx, :default_device, :gpu)

    if gpu? do
      assert EMLX.default_device() == :gpu
    else
      assert_raise EMLX.NIFError,
                   ~r/:gpu is configured.*no GPU backend available; use :cpu/,
                   fn ->
                     EMLX.default_device()
                   end
    end
  end

  test "an unknown device is an ArgumentError" do
    Application.put_env(:emlx, :default_device, :tpu)

    assert_raise ArgumentError, ~r/must be :cpu or :gpu, got: :tpu/, fn ->
      EMLX.default_device()
    end
  end
end
