#!/bin/sh
# A stand-in MCP server for the gate's tests that never answers initialize
# and answers every other request with an empty result, as it would a ping.
while IFS= read -r line; do
	case $line in
	*'"method":"initialize"'*) ;;
	*'"id":'*)
		id=$(printf '%s\n' "$line" | sed -nE 's/.*"id":("[^"]*"|[0-9.eE+-]+).*/\1/p')
		printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id"
		;;
	esac
done
