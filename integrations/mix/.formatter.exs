# integrations/mix/.formatter.exs: mix format for the package
[inputs: ["{mix,.formatter}.exs", "{lib,test}/**/*.{ex,exs}"]]
