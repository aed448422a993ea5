# integrations/mix/mix.exs: the Mix package `gate`: `mix gate` runs gate on the
# project, `mix gate.install` fetches and verifies the release binary. Only OTP's and
# Elixir's own modules (:httpc, :ssl, :public_key, :crypto): no Hex dependency.
defmodule Gate.MixProject do
  use Mix.Project

  # gate's version (gate/version.h): the release this package installs by default
  @version "0.1.0"

  def project do
    [
      app: :gate,
      version: @version,
      elixir: "~> 1.14",
      start_permanent: false,
      deps: [],
      description: "Runs the gate memory quality gate on a Mix project's test suite",
      package: [files: ~w(lib mix.exs README.md .formatter.exs)],
      docs: [main: "readme", extras: ["README.md"]]
    ]
  end

  def application do
    [extra_applications: [:logger, :inets, :ssl, :public_key, :crypto]]
  end
end
