# integrations/mix/test/test_helper.exs: the package's own ExUnit tests (cd integrations/mix && mix test)
ExUnit.start()
