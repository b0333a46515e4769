package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/rhysd/actionlint"
)

// exprEnv is what an expression can see.
type exprEnv struct {
	ctx map[string]any
	// status functions of the job or step being evaluated
	cancelled, success, failure bool
}

// evalExpr evaluates the text inside ${{ }}.
func evalExpr(src string, env exprEnv) (any, error) {
	node, err := actionlint.NewExprParser().Parse(actionlint.NewExprLexer(src + "}}"))
	if err != nil {
		return nil, fmt.Errorf("parsing %q: %v", src, err)
	}
	v, ferr := eval(node, env)
	if ferr != nil {
		return nil, fmt.Errorf("evaluating %q: %w", src, ferr)
	}
	return v, nil
}

// interpolate replaces every ${{ expr }} of a workflow value.
func interpolate(s string, env exprEnv) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${{")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		j := strings.Index(s[i:], "}}")
		if j < 0 {
			return "", fmt.Errorf("unterminated expression in %q", s)
		}
		b.WriteString(s[:i])
		v, err := evalExpr(strings.TrimSpace(s[i+3:i+j]), env)
		if err != nil {
			return "", err
		}
		b.WriteString(toString(v))
		s = s[i+j+2:]
	}
}

// condition evaluates a job's or step's if: as GitHub does, wrapped in
// success() when it calls no status function.
func condition(src string, env exprEnv) (bool, error) {
	src = strings.TrimSpace(src)
	if strings.HasPrefix(src, "${{") && strings.HasSuffix(src, "}}") {
		src = strings.TrimSpace(src[3 : len(src)-2])
	}
	if src == "" {
		return env.success, nil
	}
	hasStatus := false
	for _, f := range []string{"success(", "failure(", "cancelled(", "always("} {
		hasStatus = hasStatus || strings.Contains(src, f)
	}
	if !hasStatus {
		src = "success() && (" + src + ")"
	}
	v, err := evalExpr(src, env)
	return truthy(v), err
}

func eval(n actionlint.ExprNode, env exprEnv) (any, error) {
	switch n := n.(type) {
	case *actionlint.VariableNode:
		return env.ctx[strings.ToLower(n.Name)], nil
	case *actionlint.ObjectDerefNode:
		r, err := eval(n.Receiver, env)
		if err != nil {
			return nil, err
		}
		if m, ok := r.(map[string]any); ok {
			return m[strings.ToLower(n.Property)], nil
		}
		return nil, nil
	case *actionlint.StringNode:
		return n.Value, nil
	case *actionlint.IntNode:
		return float64(n.Value), nil
	case *actionlint.BoolNode:
		return n.Value, nil
	case *actionlint.NullNode:
		return nil, nil
	case *actionlint.NotOpNode:
		v, err := eval(n.Operand, env)
		return !truthy(v), err
	case *actionlint.LogicalOpNode:
		l, err := eval(n.Left, env)
		if err != nil {
			return nil, err
		}
		if (n.Kind == actionlint.LogicalOpNodeKindAnd) != truthy(l) {
			return l, nil
		}
		return eval(n.Right, env)
	case *actionlint.CompareOpNode:
		l, err := eval(n.Left, env)
		if err != nil {
			return nil, err
		}
		r, err := eval(n.Right, env)
		if err != nil {
			return nil, err
		}
		switch n.Kind {
		case actionlint.CompareOpNodeKindEq:
			return looseEqual(l, r), nil
		case actionlint.CompareOpNodeKindNotEq:
			return !looseEqual(l, r), nil
		}
		return nil, fmt.Errorf("comparison %s is not simulated", n.Kind)
	case *actionlint.FuncCallNode:
		switch strings.ToLower(n.Callee) {
		case "always":
			return true, nil
		case "cancelled":
			return env.cancelled, nil
		case "success":
			return env.success, nil
		case "failure":
			return env.failure, nil
		case "format":
			args := make([]any, len(n.Args))
			for i, a := range n.Args {
				v, err := eval(a, env)
				if err != nil {
					return nil, err
				}
				args[i] = v
			}
			f := toString(args[0])
			for i, a := range args[1:] {
				f = strings.ReplaceAll(f, "{"+strconv.Itoa(i)+"}", toString(a))
			}
			return f, nil
		}
		return nil, fmt.Errorf("function %s is not simulated", n.Callee)
	}
	return nil, fmt.Errorf("expression node %T is not simulated", n)
}

func truthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case string:
		return v != ""
	case float64:
		return v != 0 && !math.IsNaN(v)
	}
	return true
}

func toString(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

func toNumber(v any) float64 {
	switch v := v.(type) {
	case nil:
		return 0
	case bool:
		if v {
			return 1
		}
		return 0
	case float64:
		return v
	case string:
		if strings.TrimSpace(v) == "" {
			return 0
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return math.NaN()
		}
		return f
	}
	return math.NaN()
}

func looseEqual(l, r any) bool {
	ls, lok := l.(string)
	rs, rok := r.(string)
	if lok && rok {
		return strings.EqualFold(ls, rs)
	}
	if l == nil && r == nil {
		return true
	}
	return toNumber(l) == toNumber(r)
}
