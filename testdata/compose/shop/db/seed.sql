INSERT INTO products VALUES (1, 'tea');
