// Expectations recorded from kubectl 1.33 (`kubectl patch --local -f obj.yaml -p {} -o go-template=... / -o jsonpath=...`)
// on the object below: the output, or the parse error, or the execution error with the output
// written before it. Cases whose output kubectl varies from run to run (map iteration order of
// JSONPath wildcards) are left out. Generated data, not code.

export const OBJECT: Record<string, unknown> = {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"default","labels":{"app":"web","tier":"1"}},"data":{"a":"1","b":"hello world","enc":"aGVsbG8=","html":"<a href='x'>&</a>"},"spec":{"replicas":3,"big":1000000,"f":1.5,"neg":-2,"nul":null,"list":[1,"a",{"x":1},null,true],"t":true,"fa":false,"empty":"","m":{},"l0":[],"nested":{"a":{"b":{"c":"deep"}}},"items":[{"name":"one","v":1},{"name":"two","v":2},{"name":"three","v":3}]}};

export interface TemplateCase {
  template: string;
  allowMissingKeys: boolean;
  json?: boolean;
  output?: string;
  partial?: string;
  parseError?: string;
  execError?: string;
}

export const GO_TEMPLATE_CASES: TemplateCase[] = [
 {
  "template": "{{.metadata.name}}",
  "allowMissingKeys": true,
  "output": "x"
 },
 {
  "template": "{{.spec.replicas}} {{.spec.big}} {{.spec.f}} {{.spec.neg}} {{.spec.nul}} {{.spec.t}}",
  "allowMissingKeys": true,
  "output": "3 1000000 1.5 -2 <no value> true"
 },
 {
  "template": "{{.spec.list}}",
  "allowMissingKeys": true,
  "output": "[1 a map[x:1] <nil> true]"
 },
 {
  "template": "{{.spec.m}} {{.spec.l0}} {{.spec.empty}}|",
  "allowMissingKeys": true,
  "output": "map[] [] |"
 },
 {
  "template": "{{.spec}}",
  "allowMissingKeys": true,
  "output": "map[big:1000000 empty: f:1.5 fa:false items:[map[name:one v:1] map[name:two v:2] map[name:three v:3]] l0:[] list:[1 a map[x:1] <nil> true] m:map[] neg:-2 nested:map[a:map[b:map[c:deep]]] nul:<nil> replicas:3 t:true]"
 },
 {
  "template": "{{.nope}}",
  "allowMissingKeys": true,
  "output": "<no value>"
 },
 {
  "template": "{{.nope.deeper}}",
  "allowMissingKeys": true,
  "output": "<no value>"
 },
 {
  "template": "{{.nope}}",
  "allowMissingKeys": false,
  "partial": "",
  "execError": "template: output:1:2: executing \"output\" at <.nope>: map has no entry for key \"nope\""
 },
 {
  "template": "{{.spec.nope}}",
  "allowMissingKeys": false,
  "partial": "",
  "execError": "template: output:1:7: executing \"output\" at <.spec.nope>: map has no entry for key \"nope\""
 },
 {
  "template": "{{.spec.nul.x}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:7: executing \"output\" at <.spec.nul.x>: nil pointer evaluating interface {}.x"
 },
 {
  "template": "{{.metadata.name.x}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:11: executing \"output\" at <.metadata.name.x>: can't evaluate field x in type interface {}"
 },
 {
  "template": "{{range .spec.items}}{{.name}}={{.v}};{{end}}",
  "allowMissingKeys": true,
  "output": "one=1;two=2;three=3;"
 },
 {
  "template": "{{range $i, $e := .spec.items}}{{$i}}:{{$e.name}} {{end}}",
  "allowMissingKeys": true,
  "output": "0:one 1:two 2:three "
 },
 {
  "template": "{{range $k, $v := .metadata.labels}}{{$k}}={{$v}},{{end}}",
  "allowMissingKeys": true,
  "output": "app=web,tier=1,"
 },
 {
  "template": "{{range .nope}}x{{else}}empty{{end}}",
  "allowMissingKeys": true,
  "output": "empty"
 },
 {
  "template": "{{range .spec.nul}}x{{else}}empty{{end}}",
  "allowMissingKeys": true,
  "output": "empty"
 },
 {
  "template": "{{range .spec.replicas}}x{{end}}",
  "allowMissingKeys": true,
  "output": "xxx"
 },
 {
  "template": "{{range 3}}{{.}}{{end}}",
  "allowMissingKeys": true,
  "output": "012"
 },
 {
  "template": "{{if .spec.t}}yes{{else}}no{{end}}",
  "allowMissingKeys": true,
  "output": "yes"
 },
 {
  "template": "{{if .spec.fa}}yes{{else if .spec.t}}elif{{end}}",
  "allowMissingKeys": true,
  "output": "elif"
 },
 {
  "template": "{{with .spec.nested.a.b}}{{.c}}{{end}}",
  "allowMissingKeys": true,
  "output": "deep"
 },
 {
  "template": "{{with .nope}}x{{else with .spec.f}}{{.}}{{end}}",
  "allowMissingKeys": true,
  "output": "1.5"
 },
 {
  "template": "{{len .spec.items}} {{len .metadata.name}} {{len .data}}",
  "allowMissingKeys": true,
  "output": "3 1 4"
 },
 {
  "template": "{{len .nope}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:2: executing \"output\" at <len .nope>: error calling len: reflect: call of reflect.Value.Type on zero Value"
 },
 {
  "template": "{{len .spec.replicas}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:2: executing \"output\" at <len .spec.replicas>: error calling len: len of type int64"
 },
 {
  "template": "{{index .data \"a\"}} {{index .spec.items 1}} {{index .spec.list 2 \"x\"}}",
  "allowMissingKeys": true,
  "output": "1 map[name:two v:2] 1"
 },
 {
  "template": "{{index .data \"zz\"}}",
  "allowMissingKeys": true,
  "output": "<no value>"
 },
 {
  "template": "{{index .spec.items 5}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:2: executing \"output\" at <index .spec.items 5>: error calling index: index out of range: 5"
 },
 {
  "template": "{{index .spec.items 3}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:2: executing \"output\" at <index .spec.items 3>: error calling index: reflect: slice index out of range"
 },
 {
  "template": "{{index .metadata.name 0}}",
  "allowMissingKeys": true,
  "output": "120"
 },
 {
  "template": "{{index .spec.replicas 0}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:2: executing \"output\" at <index .spec.replicas 0>: error calling index: can't index item of type int64"
 },
 {
  "template": "{{printf \"%d\" .spec.replicas}}",
  "allowMissingKeys": true,
  "output": "3"
 },
 {
  "template": "{{printf \"%v|%s|%q|%5.2f|%-6s|%06d|%x|%X|%t|%T\" .spec.replicas .metadata.name .metadata.name .spec.f \"ab\" 42 \"hi\" 255 true .spec}}",
  "allowMissingKeys": true,
  "output": "3|x|\"x\"| 1.50|ab    |000042|6869|FF|true|map[string]interface {}"
 },
 {
  "template": "{{printf \"%d %d\" 1}}",
  "allowMissingKeys": true,
  "output": "1 %!d(MISSING)"
 },
 {
  "template": "{{printf \"%d\" 1 2}}",
  "allowMissingKeys": true,
  "output": "1%!(EXTRA int=2)"
 },
 {
  "template": "{{printf \"%s\" .nope}}",
  "allowMissingKeys": true,
  "output": "%!s(<nil>)"
 },
 {
  "template": "{{printf \"%e %g %E %G\" 123456.789 0.0000123 1e21 100000.0}}",
  "allowMissingKeys": true,
  "output": "1.234568e+05 1.23e-05 1.000000E+21 100000"
 },
 {
  "template": "{{printf \"%.0f %.1f %.2f\" 0.5 2.25 1.005}}",
  "allowMissingKeys": true,
  "output": "0 2.2 1.00"
 },
 {
  "template": "{{printf \"%c %U %q\" 65 0x1F600 'x'}}",
  "allowMissingKeys": true,
  "output": "A U+1F600 'x'"
 },
 {
  "template": "{{printf \"%v\" .spec.list}} {{printf \"%+v\" .spec.nested}} {{printf \"%#v\" .spec.list}}",
  "allowMissingKeys": true,
  "output": "[1 a map[x:1] <nil> true] map[a:map[b:map[c:deep]]] []interface {}{1, \"a\", map[string]interface {}{\"x\":1}, interface {}(nil), true}"
 },
 {
  "template": "{{.spec.replicas | printf \"%v-x\"}}",
  "allowMissingKeys": true,
  "output": "3-x"
 },
 {
  "template": "{{print 1 2 \"a\" \"b\" 3}} {{println \"x\" 1}}",
  "allowMissingKeys": true,
  "output": "1 2ab3 x 1\n"
 },
 {
  "template": "{{eq .spec.replicas 3}}",
  "allowMissingKeys": true,
  "output": "true"
 },
 {
  "template": "{{eq .spec.replicas 3.0}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:2: executing \"output\" at <eq .spec.replicas 3.0>: error calling eq: incompatible types for comparison"
 },
 {
  "template": "{{eq .metadata.name \"x\"}} {{ne .metadata.name \"y\"}} {{eq \"a\" \"b\" \"a\"}}",
  "allowMissingKeys": true,
  "output": "true true true"
 },
 {
  "template": "{{lt 1 2}} {{lt .spec.f 2.0}} {{lt \"a\" \"b\"}} {{gt 3 1}} {{le 2 2}} {{ge 1 2}}",
  "allowMissingKeys": true,
  "output": "true true true true true false"
 },
 {
  "template": "{{lt .spec.list 1}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:2: executing \"output\" at <lt .spec.list 1>: error calling lt: invalid type for comparison"
 },
 {
  "template": "{{eq .nope .nope2}} {{eq .nope 1}}",
  "allowMissingKeys": true,
  "output": "true false"
 },
 {
  "template": "{{and 1 0 2}} {{or 0 \"\" \"x\"}} {{not .spec.t}} {{and .spec.t .spec.f}}",
  "allowMissingKeys": true,
  "output": "0 x false 1.5"
 },
 {
  "template": "{{base64decode .data.enc}}",
  "allowMissingKeys": true,
  "output": "hello"
 },
 {
  "template": "{{base64decode \"aGVsbG8\"}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:2: executing \"output\" at <base64decode \"aGVsbG8\">: error calling base64decode: base64 decode failed: illegal base64 data at input byte 4"
 },
 {
  "template": "{{base64decode \"!!!!\"}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:2: executing \"output\" at <base64decode \"!!!!\">: error calling base64decode: base64 decode failed: illegal base64 data at input byte 0"
 },
 {
  "template": "{{exists . \"spec\" \"items\" 1}} {{exists . \"spec\" \"nope\"}} {{exists .spec.items 9}}",
  "allowMissingKeys": true,
  "output": "true false false"
 },
 {
  "template": "{{html .data.html}} {{js .data.html}} {{urlquery \"a b&c=d/é\"}}",
  "allowMissingKeys": true,
  "output": "&lt;a href=&#39;x&#39;&gt;&amp;&lt;/a&gt; \\u003Ca href\\u003D\\'x\\'\\u003E\\u0026\\u003C/a\\u003E a+b%26c%3Dd%2F%C3%A9"
 },
 {
  "template": "{{$x := .metadata.name}}{{$x}}-{{$x = \"y\"}}{{$x}}",
  "allowMissingKeys": true,
  "output": "x-y"
 },
 {
  "template": "{{/* comment */}}after",
  "allowMissingKeys": true,
  "output": "after"
 },
 {
  "template": "a  {{- \" trimmed \" -}}  b",
  "allowMissingKeys": true,
  "output": "a trimmed b"
 },
 {
  "template": "{{range .spec.items}}{{if eq .name \"two\"}}{{break}}{{end}}{{.name}}{{end}}",
  "allowMissingKeys": true,
  "output": "one"
 },
 {
  "template": "{{range .spec.items}}{{if eq .name \"two\"}}{{continue}}{{end}}{{.name}}{{end}}",
  "allowMissingKeys": true,
  "output": "onethree"
 },
 {
  "template": "{{define \"T\"}}[{{.}}]{{end}}{{template \"T\" .metadata.name}}",
  "allowMissingKeys": true,
  "output": "[x]"
 },
 {
  "template": "{{block \"B\" .metadata.name}}<{{.}}>{{end}}",
  "allowMissingKeys": true,
  "output": "<x>"
 },
 {
  "template": "{{slice .metadata.name 0 1}} {{slice .spec.list 1 3}}",
  "allowMissingKeys": true,
  "output": "x [a map[x:1]]"
 },
 {
  "template": "{{.metadata.name \"x\"}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:11: executing \"output\" at <.metadata.name>: name is not a method but has arguments"
 },
 {
  "template": "{{\"abc\" | len}}",
  "allowMissingKeys": true,
  "output": "3"
 },
 {
  "template": "{{nil}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:2: executing \"output\" at <nil>: nil is not a command"
 },
 {
  "template": "{{.x",
  "allowMissingKeys": true,
  "parseError": "template: output:1: unclosed action"
 },
 {
  "template": "{{.x}",
  "allowMissingKeys": true,
  "parseError": "template: output:1: bad character U+007D '}'"
 },
 {
  "template": "{{foo}}",
  "allowMissingKeys": true,
  "parseError": "template: output:1: function \"foo\" not defined"
 },
 {
  "template": "{{$undefined}}",
  "allowMissingKeys": true,
  "parseError": "template: output:1: undefined variable \"$undefined\""
 },
 {
  "template": "{{range .x}}",
  "allowMissingKeys": true,
  "parseError": "template: output:1: unexpected EOF"
 },
 {
  "template": "{{end}}",
  "allowMissingKeys": true,
  "parseError": "template: output:1: unexpected {{end}}"
 },
 {
  "template": "{{else}}",
  "allowMissingKeys": true,
  "parseError": "template: output:1: unexpected {{else}}"
 },
 {
  "template": "{{1 | len}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:6: executing \"output\" at <len>: error calling len: len of type int"
 },
 {
  "template": "{{len 1 2}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:2: executing \"output\" at <len>: wrong number of args for len: want 1 got 2"
 },
 {
  "template": "{{printf}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:2: executing \"output\" at <printf>: wrong number of args for printf: want at least 1 got 0"
 },
 {
  "template": "{{3.5}} {{1e6}} {{0x10}} {{'a'}} {{1_000}} {{-1}}",
  "allowMissingKeys": true,
  "output": "3.5 1e+06 16 97 1000 -1"
 },
 {
  "template": "{{\"unterminated}}",
  "allowMissingKeys": true,
  "parseError": "template: output:1: unterminated quoted string"
 },
 {
  "template": "{{with $x := .spec.f}}{{$x}}{{end}}",
  "allowMissingKeys": true,
  "output": "1.5"
 },
 {
  "template": "{{(index .spec.items 0).name}}",
  "allowMissingKeys": true,
  "output": "one"
 },
 {
  "template": "{{(.spec).replicas}}",
  "allowMissingKeys": true,
  "output": "3"
 },
 {
  "template": "{{.spec.items | len}}",
  "allowMissingKeys": true,
  "output": "3"
 },
 {
  "template": "{{index . \"metadata\" | len}}",
  "allowMissingKeys": true,
  "output": "3"
 },
 {
  "template": "{{call .metadata}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:2: executing \"output\" at <call .metadata>: error calling call: non-function .metadata of type map[string]interface {}"
 },
 {
  "template": "{{if}}{{end}}",
  "allowMissingKeys": true,
  "parseError": "template: output:1: missing value for if"
 },
 {
  "template": "{{range $i, $v, $z := .x}}{{end}}",
  "allowMissingKeys": true,
  "parseError": "template: output:1: too many declarations in range"
 },
 {
  "template": "{{break}}",
  "allowMissingKeys": true,
  "parseError": "template: output:1: {{break}} outside {{range}}"
 },
 {
  "template": "{{template \"nope\"}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:11: executing \"output\" at <{{template \"nope\"}}>: template \"nope\" not defined"
 },
 {
  "template": "{{index .data 1}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:2: executing \"output\" at <index .data 1>: error calling index: value has type int; should be string"
 },
 {
  "template": "{{index .spec.items \"a\"}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:2: executing \"output\" at <index .spec.items \"a\">: error calling index: cannot index slice/array with type string"
 },
 {
  "template": "{{index nil 1}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:2: executing \"output\" at <index nil 1>: error calling index: index of untyped nil"
 },
 {
  "template": "{{printf \"%s\" 1.0}}",
  "allowMissingKeys": true,
  "output": "%!s(float64=1)"
 },
 {
  "template": "{{printf \"%5s|%-5s|%.1s\" \"abc\" \"abc\" \"abc\"}}",
  "allowMissingKeys": true,
  "output": "  abc|abc  |a"
 },
 {
  "template": "{{printf \"%08.3f|%+d|% d|%x\" -3.14159 5 5 -255}}",
  "allowMissingKeys": true,
  "output": "-003.142|+5| 5|-ff"
 },
 {
  "template": "{{printf \"%v %d\" .spec.f .spec.f}}",
  "allowMissingKeys": true,
  "output": "1.5 %!d(float64=1.5)"
 },
 {
  "template": "{{printf \"%6.2f|%-8.3e|%g\" .spec.big .spec.f .spec.big}}",
  "allowMissingKeys": true,
  "output": "%!f(int64=1000000)|1.500e+00|%!g(int64=1000000)"
 },
 {
  "template": "{{printf \"%x %X %o %b %c\" .spec.replicas .spec.big .spec.big .spec.replicas .spec.big}}",
  "allowMissingKeys": true,
  "output": "3 F4240 3641100 11 󴉀"
 },
 {
  "template": "{{printf \"%s\" .spec}}",
  "allowMissingKeys": true,
  "output": "map[big:%!s(int64=1000000) empty: f:%!s(float64=1.5) fa:%!s(bool=false) items:[map[name:one v:%!s(int64=1)] map[name:two v:%!s(int64=2)] map[name:three v:%!s(int64=3)]] l0:[] list:[%!s(int64=1) a map[x:%!s(int64=1)] <nil> %!s(bool=true)] m:map[] neg:%!s(int64=-2) nested:map[a:map[b:map[c:deep]]] nul:<nil> replicas:%!s(int64=3) t:%!s(bool=true)]"
 },
 {
  "template": "{{printf \"%d\" .spec.list}}",
  "allowMissingKeys": true,
  "output": "[1 %!d(string=a) map[%!d(string=x):1] <nil> %!d(bool=true)]"
 },
 {
  "template": "{{printf \"%#v\" .}}",
  "allowMissingKeys": true,
  "output": "map[string]interface {}{\"apiVersion\":\"v1\", \"data\":map[string]interface {}{\"a\":\"1\", \"b\":\"hello world\", \"enc\":\"aGVsbG8=\", \"html\":\"<a href='x'>&</a>\"}, \"kind\":\"ConfigMap\", \"metadata\":map[string]interface {}{\"labels\":map[string]interface {}{\"app\":\"web\", \"tier\":\"1\"}, \"name\":\"x\", \"namespace\":\"default\"}, \"spec\":map[string]interface {}{\"big\":1000000, \"empty\":\"\", \"f\":1.5, \"fa\":false, \"items\":[]interface {}{map[string]interface {}{\"name\":\"one\", \"v\":1}, map[string]interface {}{\"name\":\"two\", \"v\":2}, map[string]interface {}{\"name\":\"three\", \"v\":3}}, \"l0\":[]interface {}{}, \"list\":[]interface {}{1, \"a\", map[string]interface {}{\"x\":1}, interface {}(nil), true}, \"m\":map[string]interface {}{}, \"neg\":-2, \"nested\":map[string]interface {}{\"a\":map[string]interface {}{\"b\":map[string]interface {}{\"c\":\"deep\"}}}, \"nul\":interface {}(nil), \"replicas\":3, \"t\":true}}"
 },
 {
  "template": "{{printf \"%q\" .spec.list}}",
  "allowMissingKeys": true,
  "output": "['\\x01' \"a\" map[\"x\":'\\x01'] <nil> %!q(bool=true)]"
 },
 {
  "template": "{{printf \"%10v|%-10v|\" .spec.replicas .metadata.name}}",
  "allowMissingKeys": true,
  "output": "         3|x         |"
 },
 {
  "template": "{{printf \"%[2]s %[1]s\" \"a\" \"b\"}}",
  "allowMissingKeys": true,
  "output": "b a"
 },
 {
  "template": "{{printf \"%[3]s\" \"a\"}}",
  "allowMissingKeys": true,
  "output": "%!s(BADINDEX)"
 },
 {
  "template": "{{printf \"%*d\" 5 3}}",
  "allowMissingKeys": true,
  "output": "    3"
 },
 {
  "template": "{{printf \"%.*f\" 2 3.14159}}",
  "allowMissingKeys": true,
  "output": "3.14"
 },
 {
  "template": "{{printf \"%!\"}}",
  "allowMissingKeys": true,
  "output": "%!!(MISSING)"
 },
 {
  "template": "{{printf \"%z\" 1}}",
  "allowMissingKeys": true,
  "output": "%!z(int=1)"
 },
 {
  "template": "{{printf \"100%%\"}}",
  "allowMissingKeys": true,
  "output": "100%"
 },
 {
  "template": "{{printf \"%v\" nil}}",
  "allowMissingKeys": true,
  "output": "<nil>"
 },
 {
  "template": "{{printf \"%s %v\" .nope .nope}}",
  "allowMissingKeys": true,
  "output": "%!s(<nil>) <nil>"
 },
 {
  "template": "{{printf \"%t\" 1}}",
  "allowMissingKeys": true,
  "output": "%!t(int=1)"
 },
 {
  "template": "{{printf \"%5t|%-5t|\" true false}}",
  "allowMissingKeys": true,
  "output": " true|false|"
 },
 {
  "template": "{{printf \"%U %#U\" 0x41 0x263A}}",
  "allowMissingKeys": true,
  "output": "U+0041 U+263A '☺'"
 },
 {
  "template": "{{printf \"%q %+q %#q\" \"héllo\n\" \"héllo\" \"hi\"}}",
  "allowMissingKeys": true,
  "parseError": "template: output:1: unterminated quoted string"
 },
 {
  "template": "{{printf \"% x|%#x|% X\" \"abc\" \"abc\" \"hi\"}}",
  "allowMissingKeys": true,
  "output": "61 62 63|0x616263|68 69"
 },
 {
  "template": "{{printf \"%e\" 0.0}} {{printf \"%g\" 1e-7}} {{printf \"%g\" 123456789.0}} {{printf \"%.3g\" 123456.0}} {{printf \"%#g\" 1.0}}",
  "allowMissingKeys": true,
  "output": "0.000000e+00 1e-07 1.23456789e+08 1.23e+05 1.00000"
 },
 {
  "template": "{{printf \"%v\" 1e100}} {{printf \"%f\" 1e20}} {{printf \"%.10f\" 0.1}}",
  "allowMissingKeys": true,
  "output": "1e+100 100000000000000000000.000000 0.1000000000"
 },
 {
  "template": "{{.spec.f | printf \"%.3f\"}}",
  "allowMissingKeys": true,
  "output": "1.500"
 },
 {
  "template": "{{printf \"%05d|%-05d|%+05d\" 42 42 42}}",
  "allowMissingKeys": true,
  "output": "00042|42   |+0042"
 },
 {
  "template": "{{printf \"%x\" -1}} {{printf \"%08b\" 5}} {{printf \"%#o\" 8}} {{printf \"%O\" 8}}",
  "allowMissingKeys": true,
  "output": "-1 00000101 010 0o10"
 },
 {
  "template": "{{printf \"%s\" true}} {{printf \"%d\" true}} {{printf \"%s\" 1.5}}",
  "allowMissingKeys": true,
  "output": "%!s(bool=true) %!d(bool=true) %!s(float64=1.5)"
 },
 {
  "template": "{{printf \"%v %v\" .spec.t .spec.nul}}",
  "allowMissingKeys": true,
  "output": "true <nil>"
 },
 {
  "template": "{{printf \"%T %T %T %T %T %T\" .spec.replicas .spec.f .spec.list .spec.nul 'a' 1}}",
  "allowMissingKeys": true,
  "output": "int64 float64 []interface {} <nil> int int"
 },
 {
  "template": "{{print .spec.nul .spec.nul}} {{print \"a\" .spec.nul \"b\"}} {{print 1 .spec.nul}}",
  "allowMissingKeys": true,
  "output": "<nil> <nil> a<nil>b 1 <nil>"
 },
 {
  "template": "{{println}}",
  "allowMissingKeys": true,
  "output": "\n"
 },
 {
  "template": "{{.spec.f}} {{.spec.neg}} {{-0.0}} {{1e21}} {{1e20}} {{123456789.0}} {{0.000012}}",
  "allowMissingKeys": true,
  "output": "1.5 -2 -0 1e+21 1e+20 1.23456789e+08 1.2e-05"
 },
 {
  "template": "{{html .spec.list}} {{js \"a\\tb\\u2028c\"}} {{urlquery .spec.list}} {{html .nope}}",
  "allowMissingKeys": true,
  "output": "[1 a map[x:1] &lt;nil&gt; true] a\\u0009b\\u2028c %5B1+a+map%5Bx%3A1%5D+%3Cnil%3E+true%5D &lt;no value&gt;"
 },
 {
  "template": "{{len .spec.m}} {{len .spec.l0}}",
  "allowMissingKeys": true,
  "output": "0 0"
 },
 {
  "template": "{{if .spec.m}}m{{else}}no m{{end}} {{if .spec.l0}}l{{else}}no l{{end}} {{if .spec.empty}}e{{else}}no e{{end}} {{if .spec.nul}}n{{else}}no n{{end}} {{if 0}}z{{else}}no z{{end}} {{if 0.0}}z{{else}}no z{{end}}",
  "allowMissingKeys": true,
  "output": "no m no l no e no n no z no z"
 },
 {
  "template": "{{with $x := .spec.items}}{{len $x}}{{end}}",
  "allowMissingKeys": true,
  "output": "3"
 },
 {
  "template": "{{range $i, $e := 3}}{{end}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:18: executing \"output\" at <3>: can't use 3 to iterate over more than one variable"
 },
 {
  "template": "{{range $i := .spec.items}}{{$i.name}}{{end}}",
  "allowMissingKeys": true,
  "output": "onetwothree"
 },
 {
  "template": "{{range .spec.m}}x{{else}}empty{{end}}",
  "allowMissingKeys": true,
  "output": "empty"
 },
 {
  "template": "{{range .metadata.name}}x{{end}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:17: executing \"output\" at <.metadata.name>: range can't iterate over x"
 },
 {
  "template": "{{range .spec.f}}x{{end}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:13: executing \"output\" at <.spec.f>: range can't iterate over 1.5"
 },
 {
  "template": "{{$}}",
  "allowMissingKeys": true,
  "output": "map[apiVersion:v1 data:map[a:1 b:hello world enc:aGVsbG8= html:<a href='x'>&</a>] kind:ConfigMap metadata:map[labels:map[app:web tier:1] name:x namespace:default] spec:map[big:1000000 empty: f:1.5 fa:false items:[map[name:one v:1] map[name:two v:2] map[name:three v:3]] l0:[] list:[1 a map[x:1] <nil> true] m:map[] neg:-2 nested:map[a:map[b:map[c:deep]]] nul:<nil> replicas:3 t:true]]"
 },
 {
  "template": "{{$.metadata.name}}",
  "allowMissingKeys": true,
  "output": "x"
 },
 {
  "template": "{{range .spec.items}}{{$.metadata.name}}{{end}}",
  "allowMissingKeys": true,
  "output": "xxx"
 },
 {
  "template": "{{.metadata.labels.app}} {{index .metadata.labels \"tier\"}}",
  "allowMissingKeys": true,
  "output": "web 1"
 },
 {
  "template": "{{\"a\\tb\"}} {{`raw\n`}}",
  "allowMissingKeys": true,
  "output": "a\tb raw\n"
 },
 {
  "template": "{{index \"héllo\" 1}}",
  "allowMissingKeys": true,
  "output": "195"
 },
 {
  "template": "{{slice \"héllo\" 1 3}}",
  "allowMissingKeys": true,
  "output": "é"
 },
 {
  "template": "{{slice .spec.list 5}}",
  "allowMissingKeys": true,
  "output": "[]"
 },
 {
  "template": "{{slice .spec.list 3 1}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:2: executing \"output\" at <slice .spec.list 3 1>: error calling slice: invalid slice index: 3 > 1"
 },
 {
  "template": "{{slice .spec.list 1 2 3}}",
  "allowMissingKeys": true,
  "output": "[a]"
 },
 {
  "template": "{{slice \"abc\" 1 2 3}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:2: executing \"output\" at <slice \"abc\" 1 2 3>: error calling slice: cannot 3-index slice a string"
 },
 {
  "template": "{{eq .spec.list .spec.list}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:2: executing \"output\" at <eq .spec.list .spec.list>: error calling eq: non-comparable type [%!s(int64=1) a map[x:%!s(int64=1)] <nil> %!s(bool=true)]: []interface {}"
 },
 {
  "template": "{{eq .spec.m 1}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:2: executing \"output\" at <eq .spec.m 1>: error calling eq: incompatible types for comparison"
 },
 {
  "template": "{{lt .spec.t .spec.t}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:2: executing \"output\" at <lt .spec.t .spec.t>: error calling lt: invalid type for comparison"
 },
 {
  "template": "{{lt 1 1.5}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:2: executing \"output\" at <lt 1 1.5>: error calling lt: incompatible types for comparison"
 },
 {
  "template": "{{eq 1 1.0}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:2: executing \"output\" at <eq 1 1.0>: error calling eq: incompatible types for comparison"
 },
 {
  "template": "{{eq 'a' 97}}",
  "allowMissingKeys": true,
  "output": "true"
 },
 {
  "template": "{{ne}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:2: executing \"output\" at <ne>: wrong number of args for ne: want 2 got 0"
 },
 {
  "template": "{{eq 1}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:2: executing \"output\" at <eq 1>: error calling eq: missing argument for comparison"
 },
 {
  "template": "{{and}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:2: executing \"output\" at <and>: wrong number of args for and: want at least 1 got 0"
 },
 {
  "template": "{{not 1 2}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:2: executing \"output\" at <not>: wrong number of args for not: want 1 got 2"
 },
 {
  "template": "{{and .nope .spec.t}} {{or .nope .spec.f}} {{and 1 .nope}}",
  "allowMissingKeys": true,
  "output": "<no value> 1.5 <no value>"
 },
 {
  "template": "{{or .spec.f (index .nope 1)}}",
  "allowMissingKeys": true,
  "output": "1.5"
 },
 {
  "template": "{{and .spec.fa (index .nope 1)}}",
  "allowMissingKeys": true,
  "output": "false"
 },
 {
  "template": "{{exists .data \"a\"}} {{exists .data}} {{exists .nope}} {{exists .spec.nul}} {{exists .spec.list 3}} {{exists .spec \"list\" 3}} {{exists .spec \"list\" 2 \"x\"}}",
  "allowMissingKeys": true,
  "output": "true true true true false false true"
 },
 {
  "template": "{{exists .spec.list \"a\"}} {{exists \"abc\" 1}} {{exists 1 1}}",
  "allowMissingKeys": true,
  "output": "false true false"
 },
 {
  "template": "{{base64decode .nope}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:15: executing \"output\" at <.nope>: invalid value; expected string"
 },
 {
  "template": "{{base64decode .spec.f}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:20: executing \"output\" at <.spec.f>: wrong type for value; expected string; got float64"
 },
 {
  "template": "{{base64decode \"YQ==\"}} {{base64decode \"YQ\"}} {{base64decode \"YWJj\nZA==\"}} {{base64decode \"Y\"}} {{base64decode \"YQ==YQ==\"}} {{base64decode \"YQ=x\"}}",
  "allowMissingKeys": true,
  "parseError": "template: output:1: unterminated quoted string"
 },
 {
  "template": "{{.metadata.name | base64decode}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:19: executing \"output\" at <base64decode>: error calling base64decode: base64 decode failed: illegal base64 data at input byte 0"
 },
 {
  "template": "{{ .metadata.name | printf \"%s:%s\" \"pre\" }}",
  "allowMissingKeys": true,
  "output": "pre:x"
 },
 {
  "template": "{{ .spec.replicas | eq 3 }}",
  "allowMissingKeys": true,
  "output": "true"
 },
 {
  "template": "{{ 3 | eq .spec.replicas }}",
  "allowMissingKeys": true,
  "output": "true"
 },
 {
  "template": "{{ .metadata.name | .spec }}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:20: executing \"output\" at <.spec>: spec is not a method but has arguments"
 },
 {
  "template": "{{ \"x\" | 1 }}",
  "allowMissingKeys": true,
  "parseError": "template: output:1: non executable command in pipeline stage 2"
 },
 {
  "template": "{{$x := 1}}{{$x := 2}}{{$x}}",
  "allowMissingKeys": true,
  "output": "2"
 },
 {
  "template": "{{if $y := .spec.f}}{{$y}}{{end}}{{$y}}",
  "allowMissingKeys": true,
  "parseError": "template: output:1: undefined variable \"$y\""
 },
 {
  "template": "{{- /* c */ -}}  x",
  "allowMissingKeys": true,
  "output": "x"
 },
 {
  "template": "{{/* unclosed",
  "allowMissingKeys": true,
  "parseError": "template: output:1: unclosed comment"
 },
 {
  "template": "{{/* c */ x}}",
  "allowMissingKeys": true,
  "parseError": "template: output:1: comment ends before closing delimiter"
 },
 {
  "template": "{{\"\\z\"}}",
  "allowMissingKeys": true,
  "parseError": "template: output:1: invalid syntax"
 },
 {
  "template": "{{'ab'}}",
  "allowMissingKeys": true,
  "parseError": "template: output:1: malformed character constant: 'ab'"
 },
 {
  "template": "{{'\n'}}{{'\\x41'}}{{'\\u00e9'}}",
  "allowMissingKeys": true,
  "parseError": "template: output:1: unterminated character constant"
 },
 {
  "template": "{{0x1p-2}} {{0b101}} {{0o17}} {{017}} {{1_000.5}} {{1e}} {{0x}}",
  "allowMissingKeys": true,
  "parseError": "template: output:1: illegal number syntax: \"1e\""
 },
 {
  "template": "{{9223372036854775807}} {{9223372036854775808}} {{18446744073709551616}}",
  "allowMissingKeys": true,
  "parseError": "template: output:1: integer overflow: \"18446744073709551616\""
 },
 {
  "template": "{{1i}} {{2+3i}}",
  "allowMissingKeys": true,
  "output": "(0+1i) (2+3i)"
 },
 {
  "template": "{{.spec.items.x}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:7: executing \"output\" at <.spec.items.x>: can't evaluate field x in type interface {}"
 },
 {
  "template": "{{(index .spec.items 0).nope}}",
  "allowMissingKeys": true,
  "output": "<no value>"
 },
 {
  "template": "{{(.nope).x}}",
  "allowMissingKeys": true,
  "output": "<no value>"
 },
 {
  "template": "{{(.nope).x}}",
  "allowMissingKeys": false,
  "partial": "",
  "execError": "template: output:1:3: executing \"output\" at <.nope>: map has no entry for key \"nope\""
 },
 {
  "template": "{{.nope.x}}",
  "allowMissingKeys": false,
  "partial": "",
  "execError": "template: output:1:7: executing \"output\" at <.nope.x>: map has no entry for key \"nope\""
 },
 {
  "template": "{{range .nope}}{{end}}",
  "allowMissingKeys": false,
  "partial": "",
  "execError": "template: output:1:8: executing \"output\" at <.nope>: map has no entry for key \"nope\""
 },
 {
  "template": "{{index .data \"zz\"}}",
  "allowMissingKeys": false,
  "output": "<no value>"
 },
 {
  "template": "{{with .nope}}x{{end}}",
  "allowMissingKeys": false,
  "partial": "",
  "execError": "template: output:1:7: executing \"output\" at <.nope>: map has no entry for key \"nope\""
 },
 {
  "template": "{{.}}",
  "allowMissingKeys": true,
  "output": "map[apiVersion:v1 data:map[a:1 b:hello world enc:aGVsbG8= html:<a href='x'>&</a>] kind:ConfigMap metadata:map[labels:map[app:web tier:1] name:x namespace:default] spec:map[big:1000000 empty: f:1.5 fa:false items:[map[name:one v:1] map[name:two v:2] map[name:three v:3]] l0:[] list:[1 a map[x:1] <nil> true] m:map[] neg:-2 nested:map[a:map[b:map[c:deep]]] nul:<nil> replicas:3 t:true]]"
 },
 {
  "template": "{{ .metadata.name}} {{.metadata.name }} {{   .metadata.name   }}",
  "allowMissingKeys": true,
  "output": "x x x"
 },
 {
  "template": "{{.metadata.name|printf \"%s\"}}",
  "allowMissingKeys": true,
  "output": "x"
 },
 {
  "template": "{{.metadata.name  |  printf \"%s\"}}",
  "allowMissingKeys": true,
  "output": "x"
 },
 {
  "template": "{{  }}",
  "allowMissingKeys": true,
  "parseError": "template: output:1: missing value for command"
 },
 {
  "template": "{{.metadata.name | }}",
  "allowMissingKeys": true,
  "output": "x"
 },
 {
  "template": "{{| .metadata.name}}",
  "allowMissingKeys": true,
  "parseError": "template: output:1: unexpected \"|\" in command"
 },
 {
  "template": "{{$x = 1}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:7: executing \"output\" at <1>: undefined variable: $x"
 },
 {
  "template": "{{$x := }}",
  "allowMissingKeys": true,
  "parseError": "template: output:1: missing value for command"
 },
 {
  "template": "{{range $k, $v := .spec.m}}{{else}}none{{end}}",
  "allowMissingKeys": true,
  "output": "none"
 },
 {
  "template": "{{with .spec}}{{with .items}}{{len .}}{{end}}{{end}}",
  "allowMissingKeys": true,
  "output": "3"
 },
 {
  "template": "{{template \"x\" .}}{{define \"x\"}}X{{.metadata.name}}{{end}}",
  "allowMissingKeys": true,
  "output": "Xx"
 },
 {
  "template": "{{define \"x\"}}a{{end}}{{define \"x\"}}b{{end}}",
  "allowMissingKeys": true,
  "parseError": "template: output:1: template: multiple definition of template \"x\""
 },
 {
  "template": "{{define \"x\"}}{{end}}",
  "allowMissingKeys": true,
  "output": ""
 },
 {
  "template": "{{if .spec.t}}a{{else}}b{{else}}c{{end}}",
  "allowMissingKeys": true,
  "parseError": "template: output:1: expected end; found {{else}}"
 },
 {
  "template": "{{range .spec.items}}{{else if .x}}{{end}}",
  "allowMissingKeys": true,
  "parseError": "template: output:1: unexpected <if> in input"
 },
 {
  "template": "{{if 1}}{{end}}{{end}}",
  "allowMissingKeys": true,
  "parseError": "template: output:1: unexpected {{end}}"
 },
 {
  "template": "{{printf \"%s\" (printf \"%d\" 1)}}",
  "allowMissingKeys": true,
  "output": "1"
 },
 {
  "template": "{{(printf \"%d\" 1) | printf \"%s!\"}}",
  "allowMissingKeys": true,
  "output": "1!"
 },
 {
  "template": "{{printf \"%v\" (1)}}",
  "allowMissingKeys": true,
  "output": "1"
 },
 {
  "template": "{{(1) 2}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:2: executing \"output\" at <(1) 2>: can't give argument to non-function 1"
 },
 {
  "template": "{{.metadata.name.x.y}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:11: executing \"output\" at <.metadata.name.x.y>: can't evaluate field x in type interface {}"
 },
 {
  "template": "{{.spec.items.x}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:7: executing \"output\" at <.spec.items.x>: can't evaluate field x in type interface {}"
 },
 {
  "template": "{{index .spec.items 0 \"name\"}}",
  "allowMissingKeys": true,
  "output": "one"
 },
 {
  "template": "{{index .spec.items -1}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:2: executing \"output\" at <index .spec.items -1>: error calling index: index out of range: -1"
 },
 {
  "template": "{{index .spec.items 1.5}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:2: executing \"output\" at <index .spec.items 1.5>: error calling index: cannot index slice/array with type float64"
 },
 {
  "template": "{{len}}",
  "allowMissingKeys": true,
  "partial": "",
  "execError": "template: output:1:2: executing \"output\" at <len>: wrong number of args for len: want 1 got 0"
 },
 {
  "template": "{{printf \"%d %s\" 1}}",
  "allowMissingKeys": true,
  "output": "1 %!s(MISSING)"
 }
];

export const JSONPATH_CASES: TemplateCase[] = [
 {
  "template": "{.metadata.name}",
  "allowMissingKeys": true,
  "output": "x"
 },
 {
  "template": "{.metadata.name}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    \"x\"\n]\n"
 },
 {
  "template": "{.spec.replicas} {.spec.big} {.spec.f} {.spec.neg} {.spec.nul} {.spec.t}",
  "allowMissingKeys": true,
  "output": "3 1000000 1.5 -2 null true"
 },
 {
  "template": "{.spec.replicas} {.spec.big} {.spec.f} {.spec.neg} {.spec.nul} {.spec.t}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    3\n]\n[\n    \" \"\n]\n[\n    1000000\n]\n[\n    \" \"\n]\n[\n    1.5\n]\n[\n    \" \"\n]\n[\n    -2\n]\n[\n    \" \"\n]\n[\n    null\n]\n[\n    \" \"\n]\n[\n    true\n]\n"
 },
 {
  "template": "{.spec.list}",
  "allowMissingKeys": true,
  "output": "[1,\"a\",{\"x\":1},null,true]"
 },
 {
  "template": "{.spec.list}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    [\n        1,\n        \"a\",\n        {\n            \"x\": 1\n        },\n        null,\n        true\n    ]\n]\n"
 },
 {
  "template": "{.spec.m}{.spec.l0}{.spec.empty}|",
  "allowMissingKeys": true,
  "output": "{}[]|"
 },
 {
  "template": "{.spec.m}{.spec.l0}{.spec.empty}|",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    {}\n]\n[\n    []\n]\n[\n    \"\"\n]\n[\n    \"|\"\n]\n"
 },
 {
  "template": "{.spec.nested}",
  "allowMissingKeys": true,
  "output": "{\"a\":{\"b\":{\"c\":\"deep\"}}}"
 },
 {
  "template": "{.spec.nested}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    {\n        \"a\": {\n            \"b\": {\n                \"c\": \"deep\"\n            }\n        }\n    }\n]\n"
 },
 {
  "template": "{.nope}",
  "allowMissingKeys": true,
  "output": ""
 },
 {
  "template": "{.nope}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[]\n"
 },
 {
  "template": "{.nope}",
  "allowMissingKeys": false,
  "execError": "nope is not found"
 },
 {
  "template": "{.nope}",
  "allowMissingKeys": false,
  "json": true,
  "execError": "nope is not found"
 },
 {
  "template": "{.spec.nope}",
  "allowMissingKeys": false,
  "execError": "nope is not found"
 },
 {
  "template": "{.spec.nope}",
  "allowMissingKeys": false,
  "json": true,
  "execError": "nope is not found"
 },
 {
  "template": "{.spec.items[*].name}",
  "allowMissingKeys": true,
  "output": "one two three"
 },
 {
  "template": "{.spec.items[*].name}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    \"one\",\n    \"two\",\n    \"three\"\n]\n"
 },
 {
  "template": "{.spec.items[0].name}",
  "allowMissingKeys": true,
  "output": "one"
 },
 {
  "template": "{.spec.items[0].name}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    \"one\"\n]\n"
 },
 {
  "template": "{.spec.items[-1].name}",
  "allowMissingKeys": true,
  "output": "three"
 },
 {
  "template": "{.spec.items[-1].name}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    \"three\"\n]\n"
 },
 {
  "template": "{.spec.items[1:].name}",
  "allowMissingKeys": true,
  "output": "two three"
 },
 {
  "template": "{.spec.items[1:].name}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    \"two\",\n    \"three\"\n]\n"
 },
 {
  "template": "{.spec.items[:2].name}",
  "allowMissingKeys": true,
  "output": "one two"
 },
 {
  "template": "{.spec.items[:2].name}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    \"one\",\n    \"two\"\n]\n"
 },
 {
  "template": "{.spec.items[::2].name}",
  "allowMissingKeys": true,
  "output": "one three"
 },
 {
  "template": "{.spec.items[::2].name}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    \"one\",\n    \"three\"\n]\n"
 },
 {
  "template": "{.spec.items[0:3:2].name}",
  "allowMissingKeys": true,
  "output": "one three"
 },
 {
  "template": "{.spec.items[0:3:2].name}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    \"one\",\n    \"three\"\n]\n"
 },
 {
  "template": "{.spec.items[5].name}",
  "allowMissingKeys": true,
  "execError": "array index out of bounds: index 5, length 3"
 },
 {
  "template": "{.spec.items[5].name}",
  "allowMissingKeys": true,
  "json": true,
  "execError": "array index out of bounds: index 5, length 3"
 },
 {
  "template": "{.spec.items[-5].name}",
  "allowMissingKeys": true,
  "execError": "array index out of bounds: index -2, length 3"
 },
 {
  "template": "{.spec.items[-5].name}",
  "allowMissingKeys": true,
  "json": true,
  "execError": "array index out of bounds: index -2, length 3"
 },
 {
  "template": "{.spec.items[2:1].name}",
  "allowMissingKeys": true,
  "execError": "starting index 2 is greater than ending index 1"
 },
 {
  "template": "{.spec.items[2:1].name}",
  "allowMissingKeys": true,
  "json": true,
  "execError": "starting index 2 is greater than ending index 1"
 },
 {
  "template": "{.spec.items[1:1].name}",
  "allowMissingKeys": true,
  "output": ""
 },
 {
  "template": "{.spec.items[1:1].name}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[]\n"
 },
 {
  "template": "{.spec.items[::0].name}",
  "allowMissingKeys": true,
  "execError": "step must be > 0"
 },
 {
  "template": "{.spec.items[::0].name}",
  "allowMissingKeys": true,
  "json": true,
  "execError": "step must be > 0"
 },
 {
  "template": "{.spec.items[0,2].name}",
  "allowMissingKeys": true,
  "output": "one three"
 },
 {
  "template": "{.spec.items[0,2].name}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    \"one\",\n    \"three\"\n]\n"
 },
 {
  "template": "{.spec.items[*]['name','v']}",
  "allowMissingKeys": true,
  "output": "one two three 1 2 3"
 },
 {
  "template": "{.spec.items[*]['name','v']}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    \"one\",\n    \"two\",\n    \"three\",\n    1,\n    2,\n    3\n]\n"
 },
 {
  "template": "{.metadata['name']}",
  "allowMissingKeys": true,
  "output": "x"
 },
 {
  "template": "{.metadata['name']}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    \"x\"\n]\n"
 },
 {
  "template": "{.metadata.labels['app']}",
  "allowMissingKeys": true,
  "output": "web"
 },
 {
  "template": "{.metadata.labels['app']}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    \"web\"\n]\n"
 },
 {
  "template": "{.spec.items[?(@.name==\"two\")].v}",
  "allowMissingKeys": true,
  "output": "2"
 },
 {
  "template": "{.spec.items[?(@.name==\"two\")].v}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    2\n]\n"
 },
 {
  "template": "{.spec.items[?(@.name=='two')].v}",
  "allowMissingKeys": true,
  "output": "2"
 },
 {
  "template": "{.spec.items[?(@.name=='two')].v}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    2\n]\n"
 },
 {
  "template": "{.spec.items[?(@.v>1)].name}",
  "allowMissingKeys": true,
  "output": "two three"
 },
 {
  "template": "{.spec.items[?(@.v>1)].name}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    \"two\",\n    \"three\"\n]\n"
 },
 {
  "template": "{.spec.items[?(@.v>=2)].name} {.spec.items[?(@.v<2)].name} {.spec.items[?(@.v<=2)].name} {.spec.items[?(@.v!=2)].name}",
  "allowMissingKeys": true,
  "output": "two three one one two one three"
 },
 {
  "template": "{.spec.items[?(@.v>=2)].name} {.spec.items[?(@.v<2)].name} {.spec.items[?(@.v<=2)].name} {.spec.items[?(@.v!=2)].name}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    \"two\",\n    \"three\"\n]\n[\n    \" \"\n]\n[\n    \"one\"\n]\n[\n    \" \"\n]\n[\n    \"one\",\n    \"two\"\n]\n[\n    \" \"\n]\n[\n    \"one\",\n    \"three\"\n]\n"
 },
 {
  "template": "{.spec.items[?(@.v>1.5)].name}",
  "allowMissingKeys": true,
  "execError": "incompatible types for comparison"
 },
 {
  "template": "{.spec.items[?(@.v>1.5)].name}",
  "allowMissingKeys": true,
  "json": true,
  "execError": "incompatible types for comparison"
 },
 {
  "template": "{.spec.items[?(@.name)].v}",
  "allowMissingKeys": true,
  "output": "1 2 3"
 },
 {
  "template": "{.spec.items[?(@.name)].v}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    1,\n    2,\n    3\n]\n"
 },
 {
  "template": "{.spec.items[?(@.nope)].v}",
  "allowMissingKeys": true,
  "output": ""
 },
 {
  "template": "{.spec.items[?(@.nope)].v}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[]\n"
 },
 {
  "template": "{.spec.items[?(@.nope)].v}",
  "allowMissingKeys": false,
  "output": ""
 },
 {
  "template": "{.spec.items[?(@.nope)].v}",
  "allowMissingKeys": false,
  "json": true,
  "output": "[]\n"
 },
 {
  "template": "{.spec.items[?(@.nope==\"x\")].v}",
  "allowMissingKeys": false,
  "execError": "nope is not found"
 },
 {
  "template": "{.spec.items[?(@.nope==\"x\")].v}",
  "allowMissingKeys": false,
  "json": true,
  "execError": "nope is not found"
 },
 {
  "template": "{.spec.list[?(@.x)]}",
  "allowMissingKeys": true,
  "output": "{\"x\":1}"
 },
 {
  "template": "{.spec.list[?(@.x)]}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    {\n        \"x\": 1\n    }\n]\n"
 },
 {
  "template": "{.spec.list[?(@ == 1)]}",
  "allowMissingKeys": true,
  "execError": "incompatible types for comparison"
 },
 {
  "template": "{.spec.list[?(@ == 1)]}",
  "allowMissingKeys": true,
  "json": true,
  "execError": "incompatible types for comparison"
 },
 {
  "template": "{.spec.items[?(@.name==\"two\")]}",
  "allowMissingKeys": true,
  "output": "{\"name\":\"two\",\"v\":2}"
 },
 {
  "template": "{.spec.items[?(@.name==\"two\")]}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    {\n        \"name\": \"two\",\n        \"v\": 2\n    }\n]\n"
 },
 {
  "template": "{..c}",
  "allowMissingKeys": true,
  "output": "deep"
 },
 {
  "template": "{..c}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    \"deep\"\n]\n"
 },
 {
  "template": "{.spec.nested..c}",
  "allowMissingKeys": true,
  "output": "deep"
 },
 {
  "template": "{.spec.nested..c}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    \"deep\"\n]\n"
 },
 {
  "template": "{.metadata.labels.*}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    \"web\",\n    \"1\"\n]\n"
 },
 {
  "template": "{.metadata.name.*}",
  "allowMissingKeys": true,
  "output": "120"
 },
 {
  "template": "{.metadata.name.*}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    120\n]\n"
 },
 {
  "template": "{range .spec.items[*]}{.name}{\"\n\"}{end}",
  "allowMissingKeys": true,
  "parseError": "unterminated quoted string"
 },
 {
  "template": "{range .spec.items[*]}{.name}{\"\n\"}{end}",
  "allowMissingKeys": true,
  "json": true,
  "parseError": "unterminated quoted string"
 },
 {
  "template": "{range .spec.items[*]}[{.name}={.v}]{end}",
  "allowMissingKeys": true,
  "output": "[one=1][two=2][three=3]"
 },
 {
  "template": "{range .spec.items[*]}[{.name}={.v}]{end}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    \"[\"\n]\n[\n    \"one\"\n]\n[\n    \"=\"\n]\n[\n    1\n]\n[\n    \"]\"\n]\n[\n    \"[\"\n]\n[\n    \"two\"\n]\n[\n    \"=\"\n]\n[\n    2\n]\n[\n    \"]\"\n]\n[\n    \"[\"\n]\n[\n    \"three\"\n]\n[\n    \"=\"\n]\n[\n    3\n]\n[\n    \"]\"\n]\n"
 },
 {
  "template": "{range .spec.items[*]}{range .name}{@}{end}{end}",
  "allowMissingKeys": true,
  "output": "onetwothree"
 },
 {
  "template": "{range .spec.items[*]}{range .name}{@}{end}{end}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    \"one\"\n]\n[\n    \"two\"\n]\n[\n    \"three\"\n]\n"
 },
 {
  "template": "{range .nope[*]}x{end}",
  "allowMissingKeys": true,
  "output": ""
 },
 {
  "template": "{range .nope[*]}x{end}",
  "allowMissingKeys": true,
  "json": true,
  "output": ""
 },
 {
  "template": "{range .spec.list[*]}<{@}>{end}",
  "allowMissingKeys": true,
  "output": "<1><a><{\"x\":1}><<no value>><true>"
 },
 {
  "template": "{end}",
  "allowMissingKeys": true,
  "execError": "not in range, nothing to end"
 },
 {
  "template": "{end}",
  "allowMissingKeys": true,
  "json": true,
  "execError": "not in range, nothing to end"
 },
 {
  "template": "{range .spec.items[*]}{.name}",
  "allowMissingKeys": true,
  "output": "onetwothree"
 },
 {
  "template": "{range .spec.items[*]}{.name}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    \"one\"\n]\n[\n    \"two\"\n]\n[\n    \"three\"\n]\n[]\n"
 },
 {
  "template": "{.spec.items[*].name}{\"|\"}{.metadata.name}",
  "allowMissingKeys": true,
  "output": "one two three|x"
 },
 {
  "template": "{.spec.items[*].name}{\"|\"}{.metadata.name}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    \"one\",\n    \"two\",\n    \"three\"\n]\n[\n    \"|\"\n]\n[\n    \"x\"\n]\n"
 },
 {
  "template": "{\"text\"} {'single'} {\"esc\\\"aped\"} {'a\\'b'}",
  "allowMissingKeys": true,
  "output": "text single esc\"aped a'b"
 },
 {
  "template": "{\"text\"} {'single'} {\"esc\\\"aped\"} {'a\\'b'}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    \"text\"\n]\n[\n    \" \"\n]\n[\n    \"single\"\n]\n[\n    \" \"\n]\n[\n    \"esc\\\"aped\"\n]\n[\n    \" \"\n]\n[\n    \"a'b\"\n]\n"
 },
 {
  "template": "{.metadata.name}{\"\\t\"}{.metadata.namespace}",
  "allowMissingKeys": true,
  "output": "x\tdefault"
 },
 {
  "template": "{.metadata.name}{\"\\t\"}{.metadata.namespace}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    \"x\"\n]\n[\n    \"\\t\"\n]\n[\n    \"default\"\n]\n"
 },
 {
  "template": "{@}",
  "allowMissingKeys": true,
  "output": "{\"apiVersion\":\"v1\",\"data\":{\"a\":\"1\",\"b\":\"hello world\",\"enc\":\"aGVsbG8=\",\"html\":\"\\u003ca href='x'\\u003e\\u0026\\u003c/a\\u003e\"},\"kind\":\"ConfigMap\",\"metadata\":{\"labels\":{\"app\":\"web\",\"tier\":\"1\"},\"name\":\"x\",\"namespace\":\"default\"},\"spec\":{\"big\":1000000,\"empty\":\"\",\"f\":1.5,\"fa\":false,\"items\":[{\"name\":\"one\",\"v\":1},{\"name\":\"two\",\"v\":2},{\"name\":\"three\",\"v\":3}],\"l0\":[],\"list\":[1,\"a\",{\"x\":1},null,true],\"m\":{},\"neg\":-2,\"nested\":{\"a\":{\"b\":{\"c\":\"deep\"}}},\"nul\":null,\"replicas\":3,\"t\":true}}"
 },
 {
  "template": "{@}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    {\n        \"apiVersion\": \"v1\",\n        \"data\": {\n            \"a\": \"1\",\n            \"b\": \"hello world\",\n            \"enc\": \"aGVsbG8=\",\n            \"html\": \"\\u003ca href='x'\\u003e\\u0026\\u003c/a\\u003e\"\n        },\n        \"kind\": \"ConfigMap\",\n        \"metadata\": {\n            \"labels\": {\n                \"app\": \"web\",\n                \"tier\": \"1\"\n            },\n            \"name\": \"x\",\n            \"namespace\": \"default\"\n        },\n        \"spec\": {\n            \"big\": 1000000,\n            \"empty\": \"\",\n            \"f\": 1.5,\n            \"fa\": false,\n            \"items\": [\n                {\n                    \"name\": \"one\",\n                    \"v\": 1\n                },\n                {\n                    \"name\": \"two\",\n                    \"v\": 2\n                },\n                {\n                    \"name\": \"three\",\n                    \"v\": 3\n                }\n            ],\n            \"l0\": [],\n            \"list\": [\n                1,\n                \"a\",\n                {\n                    \"x\": 1\n                },\n                null,\n                true\n            ],\n            \"m\": {},\n            \"neg\": -2,\n            \"nested\": {\n                \"a\": {\n                    \"b\": {\n                        \"c\": \"deep\"\n                    }\n                }\n            },\n            \"nul\": null,\n            \"replicas\": 3,\n            \"t\": true\n        }\n    }\n]\n"
 },
 {
  "template": "{$}",
  "allowMissingKeys": true,
  "output": "{\"apiVersion\":\"v1\",\"data\":{\"a\":\"1\",\"b\":\"hello world\",\"enc\":\"aGVsbG8=\",\"html\":\"\\u003ca href='x'\\u003e\\u0026\\u003c/a\\u003e\"},\"kind\":\"ConfigMap\",\"metadata\":{\"labels\":{\"app\":\"web\",\"tier\":\"1\"},\"name\":\"x\",\"namespace\":\"default\"},\"spec\":{\"big\":1000000,\"empty\":\"\",\"f\":1.5,\"fa\":false,\"items\":[{\"name\":\"one\",\"v\":1},{\"name\":\"two\",\"v\":2},{\"name\":\"three\",\"v\":3}],\"l0\":[],\"list\":[1,\"a\",{\"x\":1},null,true],\"m\":{},\"neg\":-2,\"nested\":{\"a\":{\"b\":{\"c\":\"deep\"}}},\"nul\":null,\"replicas\":3,\"t\":true}}"
 },
 {
  "template": "{$}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    {\n        \"apiVersion\": \"v1\",\n        \"data\": {\n            \"a\": \"1\",\n            \"b\": \"hello world\",\n            \"enc\": \"aGVsbG8=\",\n            \"html\": \"\\u003ca href='x'\\u003e\\u0026\\u003c/a\\u003e\"\n        },\n        \"kind\": \"ConfigMap\",\n        \"metadata\": {\n            \"labels\": {\n                \"app\": \"web\",\n                \"tier\": \"1\"\n            },\n            \"name\": \"x\",\n            \"namespace\": \"default\"\n        },\n        \"spec\": {\n            \"big\": 1000000,\n            \"empty\": \"\",\n            \"f\": 1.5,\n            \"fa\": false,\n            \"items\": [\n                {\n                    \"name\": \"one\",\n                    \"v\": 1\n                },\n                {\n                    \"name\": \"two\",\n                    \"v\": 2\n                },\n                {\n                    \"name\": \"three\",\n                    \"v\": 3\n                }\n            ],\n            \"l0\": [],\n            \"list\": [\n                1,\n                \"a\",\n                {\n                    \"x\": 1\n                },\n                null,\n                true\n            ],\n            \"m\": {},\n            \"neg\": -2,\n            \"nested\": {\n                \"a\": {\n                    \"b\": {\n                        \"c\": \"deep\"\n                    }\n                }\n            },\n            \"nul\": null,\n            \"replicas\": 3,\n            \"t\": true\n        }\n    }\n]\n"
 },
 {
  "template": "{.}",
  "allowMissingKeys": true,
  "output": ""
 },
 {
  "template": "{.}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[]\n"
 },
 {
  "template": "{@.metadata.name}",
  "allowMissingKeys": true,
  "output": "x"
 },
 {
  "template": "{@.metadata.name}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    \"x\"\n]\n"
 },
 {
  "template": "{$.metadata.name}",
  "allowMissingKeys": true,
  "output": "x"
 },
 {
  "template": "{$.metadata.name}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    \"x\"\n]\n"
 },
 {
  "template": "{.metadata.name",
  "allowMissingKeys": true,
  "parseError": "unclosed action"
 },
 {
  "template": "{.metadata.name",
  "allowMissingKeys": true,
  "json": true,
  "parseError": "unclosed action"
 },
 {
  "template": "{.metadata[name}",
  "allowMissingKeys": true,
  "parseError": "unterminated array"
 },
 {
  "template": "{.metadata[name}",
  "allowMissingKeys": true,
  "json": true,
  "parseError": "unterminated array"
 },
 {
  "template": "{.spec.items[x]}",
  "allowMissingKeys": true,
  "parseError": "invalid array index x"
 },
 {
  "template": "{.spec.items[x]}",
  "allowMissingKeys": true,
  "json": true,
  "parseError": "invalid array index x"
 },
 {
  "template": "{.spec.items[1:2:3:4]}",
  "allowMissingKeys": true,
  "parseError": "invalid array index 1:2:3:4"
 },
 {
  "template": "{.spec.items[1:2:3:4]}",
  "allowMissingKeys": true,
  "json": true,
  "parseError": "invalid array index 1:2:3:4"
 },
 {
  "template": "{.spec.items[?(@.v>1]}",
  "allowMissingKeys": true,
  "parseError": "unterminated filter"
 },
 {
  "template": "{.spec.items[?(@.v>1]}",
  "allowMissingKeys": true,
  "json": true,
  "parseError": "unterminated filter"
 },
 {
  "template": "{.spec.items[?(@.v>1)}",
  "allowMissingKeys": true,
  "parseError": "unclosed array expect ]"
 },
 {
  "template": "{.spec.items[?(@.v>1)}",
  "allowMissingKeys": true,
  "json": true,
  "parseError": "unclosed array expect ]"
 },
 {
  "template": "{\"unterminated}",
  "allowMissingKeys": true,
  "parseError": "unterminated quoted string"
 },
 {
  "template": "{\"unterminated}",
  "allowMissingKeys": true,
  "json": true,
  "parseError": "unterminated quoted string"
 },
 {
  "template": "{#}",
  "allowMissingKeys": true,
  "parseError": "unrecognized character in action: U+0023 '#'"
 },
 {
  "template": "{#}",
  "allowMissingKeys": true,
  "json": true,
  "parseError": "unrecognized character in action: U+0023 '#'"
 },
 {
  "template": "{foo}",
  "allowMissingKeys": true,
  "execError": "unrecognized identifier foo"
 },
 {
  "template": "{foo}",
  "allowMissingKeys": true,
  "json": true,
  "execError": "unrecognized identifier foo"
 },
 {
  "template": "{true} {false} {1} {2.5} {-3}",
  "allowMissingKeys": true,
  "output": "true false 1 2.5 -3"
 },
 {
  "template": "{true} {false} {1} {2.5} {-3}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    true\n]\n[\n    \" \"\n]\n[\n    false\n]\n[\n    \" \"\n]\n[\n    1\n]\n[\n    \" \"\n]\n[\n    2.5\n]\n[\n    \" \"\n]\n[\n    -3\n]\n"
 },
 {
  "template": "{.spec.items[?(@.v==\"2\")].name}",
  "allowMissingKeys": true,
  "execError": "incompatible types for comparison"
 },
 {
  "template": "{.spec.items[?(@.v==\"2\")].name}",
  "allowMissingKeys": true,
  "json": true,
  "execError": "incompatible types for comparison"
 },
 {
  "template": "{.spec.items[?(@.v==true)].name}",
  "allowMissingKeys": true,
  "execError": "incompatible types for comparison"
 },
 {
  "template": "{.spec.items[?(@.v==true)].name}",
  "allowMissingKeys": true,
  "json": true,
  "execError": "incompatible types for comparison"
 },
 {
  "template": "{.spec.items[?(@.v==@.v)].name}",
  "allowMissingKeys": true,
  "output": "one two three"
 },
 {
  "template": "{.spec.items[?(@.v==@.v)].name}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    \"one\",\n    \"two\",\n    \"three\"\n]\n"
 },
 {
  "template": "{.spec.list[?(@>0)]}",
  "allowMissingKeys": true,
  "execError": "incompatible types for comparison"
 },
 {
  "template": "{.spec.list[?(@>0)]}",
  "allowMissingKeys": true,
  "json": true,
  "execError": "incompatible types for comparison"
 },
 {
  "template": "{.spec.nested.a.b.c}",
  "allowMissingKeys": true,
  "output": "deep"
 },
 {
  "template": "{.spec.nested.a.b.c}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    \"deep\"\n]\n"
 },
 {
  "template": "{.spec.items.name}",
  "allowMissingKeys": true,
  "output": ""
 },
 {
  "template": "{.spec.items.name}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[]\n"
 },
 {
  "template": "{.metadata.name[0]}",
  "allowMissingKeys": true,
  "execError": "string is not array or slice"
 },
 {
  "template": "{.metadata.name[0]}",
  "allowMissingKeys": true,
  "json": true,
  "execError": "string is not array or slice"
 },
 {
  "template": "{.spec.m.*}",
  "allowMissingKeys": true,
  "output": ""
 },
 {
  "template": "{.spec.m.*}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[]\n"
 },
 {
  "template": "{.data.html}",
  "allowMissingKeys": true,
  "output": "<a href='x'>&</a>"
 },
 {
  "template": "{.data.html}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    \"\\u003ca href='x'\\u003e\\u0026\\u003c/a\\u003e\"\n]\n"
 },
 {
  "template": "{.spec.nul.x}",
  "allowMissingKeys": true,
  "output": ""
 },
 {
  "template": "{.spec.nul.x}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[]\n"
 },
 {
  "template": "{.spec.nul.x}",
  "allowMissingKeys": false,
  "execError": "x is not found"
 },
 {
  "template": "{.spec.nul.x}",
  "allowMissingKeys": false,
  "json": true,
  "execError": "x is not found"
 },
 {
  "template": "{.spec.list[3]}",
  "allowMissingKeys": true,
  "output": "null"
 },
 {
  "template": "{.spec.list[3]}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    null\n]\n"
 },
 {
  "template": "{.spec.list[4]}",
  "allowMissingKeys": true,
  "output": "true"
 },
 {
  "template": "{.spec.list[4]}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    true\n]\n"
 },
 {
  "template": "{.spec.t.x}",
  "allowMissingKeys": true,
  "output": ""
 },
 {
  "template": "{.spec.t.x}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[]\n"
 },
 {
  "template": "{.spec.t.x}",
  "allowMissingKeys": false,
  "execError": "x is not found"
 },
 {
  "template": "{.spec.t.x}",
  "allowMissingKeys": false,
  "json": true,
  "execError": "x is not found"
 },
 {
  "template": "{.metadata.labels}",
  "allowMissingKeys": true,
  "output": "{\"app\":\"web\",\"tier\":\"1\"}"
 },
 {
  "template": "{.metadata.labels}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    {\n        \"app\": \"web\",\n        \"tier\": \"1\"\n    }\n]\n"
 },
 {
  "template": "{.metadata.labels.app}{.metadata.labels.tier}",
  "allowMissingKeys": true,
  "output": "web1"
 },
 {
  "template": "{.metadata.labels.app}{.metadata.labels.tier}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    \"web\"\n]\n[\n    \"1\"\n]\n"
 },
 {
  "template": "{.spec.items[0]}",
  "allowMissingKeys": true,
  "output": "{\"name\":\"one\",\"v\":1}"
 },
 {
  "template": "{.spec.items[0]}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    {\n        \"name\": \"one\",\n        \"v\": 1\n    }\n]\n"
 },
 {
  "template": "{.kind}{\"/\"}{.metadata.name}",
  "allowMissingKeys": true,
  "output": "ConfigMap/x"
 },
 {
  "template": "{.kind}{\"/\"}{.metadata.name}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    \"ConfigMap\"\n]\n[\n    \"/\"\n]\n[\n    \"x\"\n]\n"
 },
 {
  "template": "{.spec.l0[*]}",
  "allowMissingKeys": true,
  "output": ""
 },
 {
  "template": "{.spec.l0[*]}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[]\n"
 },
 {
  "template": "{.spec.l0[0]}",
  "allowMissingKeys": true,
  "execError": "array index out of bounds: index 0, length 0"
 },
 {
  "template": "{.spec.l0[0]}",
  "allowMissingKeys": true,
  "json": true,
  "execError": "array index out of bounds: index 0, length 0"
 },
 {
  "template": "{.spec.f}|{.spec.big}|{.spec.neg}",
  "allowMissingKeys": true,
  "output": "1.5|1000000|-2"
 },
 {
  "template": "{.spec.f}|{.spec.big}|{.spec.neg}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    1.5\n]\n[\n    \"|\"\n]\n[\n    1000000\n]\n[\n    \"|\"\n]\n[\n    -2\n]\n"
 },
 {
  "template": "{.spec['nested']['a']['b']}",
  "allowMissingKeys": true,
  "output": "{\"c\":\"deep\"}"
 },
 {
  "template": "{.spec['nested']['a']['b']}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    {\n        \"c\": \"deep\"\n    }\n]\n"
 },
 {
  "template": "{.spec.nested['a.b']}",
  "allowMissingKeys": true,
  "output": "{\"c\":\"deep\"}"
 },
 {
  "template": "{.spec.nested['a.b']}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    {\n        \"c\": \"deep\"\n    }\n]\n"
 },
 {
  "template": "{.spec.nested.a\\.b}",
  "allowMissingKeys": true,
  "output": ""
 },
 {
  "template": "{.spec.nested.a\\.b}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[]\n"
 },
 {
  "template": "plain text only",
  "allowMissingKeys": true,
  "output": "plain text only"
 },
 {
  "template": "plain text only",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    \"plain text only\"\n]\n"
 },
 {
  "template": "{{.metadata.name}}",
  "allowMissingKeys": true,
  "parseError": "unrecognized character in action: U+007B '{'"
 },
 {
  "template": "{{.metadata.name}}",
  "allowMissingKeys": true,
  "json": true,
  "parseError": "unrecognized character in action: U+007B '{'"
 },
 {
  "template": "{.spec.items[*].v}",
  "allowMissingKeys": true,
  "output": "1 2 3"
 },
 {
  "template": "{.spec.items[*].v}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    1,\n    2,\n    3\n]\n"
 },
 {
  "template": "{.spec.items[?(@.v>1)]}",
  "allowMissingKeys": true,
  "output": "{\"name\":\"two\",\"v\":2} {\"name\":\"three\",\"v\":3}"
 },
 {
  "template": "{.spec.items[?(@.v>1)]}",
  "allowMissingKeys": true,
  "json": true,
  "output": "[\n    {\n        \"name\": \"two\",\n        \"v\": 2\n    },\n    {\n        \"name\": \"three\",\n        \"v\": 3\n    }\n]\n"
 }
];
