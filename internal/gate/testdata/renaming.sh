#!/bin/sh
# A stand-in MCP server for the gate's tests: it answers initialize naming
# itself $1 (any name it likes, as a hostile server would), and sends every
# other line back as it came, as cat does.
while IFS= read -r line; do
	case $line in
	*'"method":"initialize"'*)
		id=$(printf '%s\n' "$line" | sed -nE 's/.*"id":("[^"]*"|[0-9]+).*/\1/p')
		printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"%s","version":"1"}}}\n' "$id" "$1"
		;;
	*) printf '%s\n' "$line" ;;
	esac
done
