package libops

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
)

// decodeRequest decodes a request's JSON strictly into v (unknown fields
// are errors naming the field, as is anything after the object). Its
// errors are bad input in the caller's terms: a value of the wrong type
// names the argument and what it wants ("world: want an integer, got a
// string"), not the Go struct it was read into.
func decodeRequest(b []byte, v any) error {
	if len(bytes.TrimSpace(b)) == 0 {
		b = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return bad("%s: want %s, got %s", jsonPath(reflect.TypeOf(v), te.Field), wantOf(te.Type), gotOf(te.Value))
		}
		return bad("request: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if dec.More() {
		return bad("request: data after the JSON object")
	}
	return nil
}

// jsonPath is an UnmarshalTypeError's Field as the request spells it:
// encoding/json names an embedded struct by its Go type ("problemReq.m"),
// whose fields the request holds at the top ("m").
func jsonPath(t reflect.Type, field string) string {
	var out []string
	for _, part := range strings.Split(field, ".") {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			out = append(out, part)
			continue
		}
		if f, ok := t.FieldByName(part); ok && f.Anonymous {
			t = f.Type // promoted: not in the request's path
			continue
		}
		out = append(out, part)
		for i := range t.NumField() {
			f := t.Field(i)
			if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name == part || (name == "" && strings.EqualFold(f.Name, part)) {
				t = f.Type
				break
			}
		}
	}
	return strings.Join(out, ".")
}

// wantOf says in JSON's words what a Go type reads: "an integer", "a list
// of strings".
func wantOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return wantOf(t.Elem())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "a non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "a list of " + pluralOf(t.Elem())
	case reflect.Map:
		return "an object of " + pluralOf(t.Elem())
	default:
		return "an object"
	}
}

// pluralOf is wantOf for several: "integers", "lists of strings".
func pluralOf(t reflect.Type) string {
	switch w := wantOf(t); w {
	case "an integer":
		return "integers"
	case "a non-negative integer":
		return "non-negative integers"
	case "a number":
		return "numbers"
	case "a string":
		return "strings"
	case "true or false":
		return "true or false values"
	case "an object":
		return "objects"
	default: // "a list of X", "an object of X"
		_, rest, _ := strings.Cut(w, " ")
		noun, of, _ := strings.Cut(rest, " ")
		return noun + "s " + of
	}
}

// gotOf says what JSON value encoding/json met (its UnmarshalTypeError's
// Value: "string", "number 1.5", "bool", "array", "object").
func gotOf(v string) string {
	switch v {
	case "string", "number":
		return "a " + v
	case "bool":
		return "true or false"
	case "array":
		return "a list"
	case "object":
		return "an object"
	}
	return strings.TrimPrefix(v, "number ") // "number 1.5": the number itself
}
