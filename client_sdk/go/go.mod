module github.com/utilityd/utilityd/client_sdk/go

go 1.19

require (
	google.golang.org/grpc v1.33.0
	google.golang.org/protobuf v1.26.0
)
