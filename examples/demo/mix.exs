defmodule Demo.MixProject do
  use Mix.Project

  def project do
    [app: :demo, version: "0.1.0", elixir: "~> 1.14", start_permanent: false, deps: []]
  end

  def application do
    [extra_applications: [:logger], mod: {Demo.Application, []}]
  end
end
