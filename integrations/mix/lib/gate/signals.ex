# integrations/mix/lib/gate/signals.ex: the VM's signal handler while `mix gate` runs gate:
# SIGTERM is passed on to gate (which stops its node, then exits); the other signals do what
# OTP's erl_signal_handler does with them.
defmodule Gate.Signals do
  @moduledoc false
  @behaviour :gen_event

  # swapped in for erl_signal_handler: {os_pid, what its terminate/2 returned}
  @impl true
  def init({os_pid, _}) when is_integer(os_pid), do: {:ok, os_pid}

  @impl true
  def handle_event(:sigterm, os_pid) do
    _ = System.cmd("kill", ["-TERM", Integer.to_string(os_pid)], stderr_to_stdout: true)
    {:ok, os_pid}
  end

  def handle_event(:sigusr1, _), do: :erlang.halt(~c"Received SIGUSR1")
  def handle_event(:sigquit, _), do: :erlang.halt()
  def handle_event(_, os_pid), do: {:ok, os_pid}

  @impl true
  def handle_call(_, os_pid), do: {:ok, :ok, os_pid}

  @impl true
  def handle_info(_, os_pid), do: {:ok, os_pid}

  @impl true
  def terminate(_, _), do: :ok
end
