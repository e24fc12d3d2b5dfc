// Package kernelpb is the plugin protocol's generated Go code (from
// proto/kernel.proto by protoc-gen-go and protoc-gen-go-grpc): the
// messages and the gRPC service between the host and a kernel plugin.
// Do not edit the .pb.go files: change the .proto and run `make proto`.
package kernelpb
