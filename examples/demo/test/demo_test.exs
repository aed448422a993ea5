defmodule Demo.PricingTest do
  use ExUnit.Case, async: true

  test "totals line items" do
    assert Demo.Pricing.total([{250, 2}, {100, 1}]) == 600
  end

  test "applies a discount" do
    assert Demo.Pricing.discount(1_000, 15) == 850
  end

  test "prices a large basket" do
    basket = for i <- 1..200_000, do: {rem(i, 97), 1}
    assert Demo.Pricing.total(basket) > 0
  end
end

defmodule Demo.SessionsTest do
  use ExUnit.Case

  test "a session opens and closes" do
    token = Demo.Sessions.open("ada")
    assert {:ok, "ada"} = Demo.Sessions.lookup(token)
    Demo.Sessions.close(token)
    assert :error = Demo.Sessions.lookup(token)
  end

  test "many sessions are closed again" do
    tokens = for i <- 1..5_000, do: Demo.Sessions.open("user#{i}")
    Enum.each(tokens, &Demo.Sessions.close/1)
    assert Enum.all?(tokens, &(Demo.Sessions.lookup(&1) == :error))
  end

  @tag :leak
  test "load: sessions opened and never closed" do
    for i <- 1..20_000, do: Demo.Sessions.open("load#{i}")
    assert Demo.Sessions.count() >= 20_000
  end
end
