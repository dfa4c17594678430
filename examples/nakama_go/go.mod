module github.com/utilityd/utilityd/examples/nakama_go

go 1.19

require (
	github.com/utilityd/utilityd/client_sdk/go v0.0.0
	google.golang.org/protobuf v1.26.0
)
