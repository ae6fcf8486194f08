SELECT `score` FROM `acme-analytics-42`.`raw_events`.`events` LIMIT 1
