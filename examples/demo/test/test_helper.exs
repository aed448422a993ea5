# The :leak test is the demo's planted leak: make demo runs it with --include leak.
ExUnit.start(exclude: [:leak])
