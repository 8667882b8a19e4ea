package policy

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// jsonValue turns a value of a rules file into the form request
// arguments take (json.Number for numbers), so that the two compare.
// TOML dates and times have no JSON form and are refused.
func jsonValue(v any) (any, error) {
	switch v := v.(type) {
	case int64:
		return json.Number(strconv.FormatInt(v, 10)), nil
	case float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return nil, fmt.Errorf("%v is not a JSON number", v)
		}
		return json.Number(strconv.FormatFloat(v, 'g', -1, 64)), nil
	case string, bool, json.Number: // json.Number: from a compiled cache
		return v, nil
	case []any:
		return jsonValues(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			var err error
			if out[k], err = jsonValue(e); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("%v: dates and times are not JSON values", v)
}

// jsonValues is jsonValue of each.
func jsonValues(vs []any) ([]any, error) {
	out := make([]any, len(vs))
	for i, v := range vs {
		var err error
		if out[i], err = jsonValue(v); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// equal compares two JSON values deeply, numbers by their value: 5 and
// 5.0 are equal, "5" is a string.
func equal(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		fx, errx := x.Float64()
		fy, erry := y.Float64()
		return errx == nil && erry == nil && fx == fy
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !equal(v, w) {
				return false
			}
		}
		return true
	}
	return a == b
}
